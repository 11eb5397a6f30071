"""The soak's view of the process tree: a grader's descendants, its workers, and processes that ended."""

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest
from soak_fixtures import PARENT_OF_A_SLEEPER, SLEEPER, wait_for

from gradekit.commands.soak_processes import descendants, grading_tree, is_alive, process_table, read_entry


@pytest.mark.nbgrader
def test_the_walk_finds_a_child_and_its_grandchild_and_sees_them_end():
    child = subprocess.Popen([sys.executable, "-c", PARENT_OF_A_SLEEPER], start_new_session=True)
    try:
        wait_for(lambda: any(e.parent == child.pid for e in process_table().values()))
        below = descendants(os.getpid(), process_table())
        grandchild = next(entry for entry in below if entry.parent == child.pid)
        assert [entry.pid for entry in below].index(child.pid) < below.index(grandchild)
        assert is_alive(grandchild)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the child leads a session: this ends both
        child.wait()
    wait_for(lambda: not is_alive(grandchild))
    assert read_entry(child.pid) is None


def _sleep_in_a_fork():
    time.sleep(60)


@pytest.mark.nbgrader
def test_a_forked_child_is_a_worker_a_started_program_is_not_and_a_spared_one_never():
    forked = multiprocessing.get_context("fork").Process(target=_sleep_in_a_fork)
    forked.start()
    program = subprocess.Popen([sys.executable, "-c", SLEEPER])
    try:
        workers = {entry.pid for entry in grading_tree(os.getpid()).workers}
        assert forked.pid in workers and program.pid not in workers
        assert forked.pid not in {e.pid for e in grading_tree(os.getpid(), frozenset({forked.pid})).workers}
    finally:
        forked.kill()
        program.kill()
        forked.join()
        program.wait()
