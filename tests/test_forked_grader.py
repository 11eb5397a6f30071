"""A grading process forked by hand: warm between tasks, ended by its budget alone, usable where multiprocessing is not."""

import multiprocessing
import os
import tempfile
import threading
import time

import pytest

from gradekit.grading.cpu_clock import Verdict
from gradekit.grading.forked_grader import REMOVE_PAUSE_SECONDS, ForkedGrader, GradingProcessLost, remove_folder
from gradekit.grading.task_budget import OverBudget, TaskBudget

pytestmark = pytest.mark.nbgrader


def answer_or_misbehave(behaviour):
    """Stands in for grading: answers with where it runs, or spins, blocks, raises or dies as told."""
    if behaviour == "spin":
        while True:
            pass
    if behaviour == "block":
        time.sleep(3600)
    if behaviour == "raise":
        raise LookupError("our own bug")
    if behaviour == "die":
        os._exit(3)
    return os.getpid(), tempfile.gettempdir()


def _no_kernel_folders(folder):
    """The kernel folders a child made: none here, since nothing in these tests starts a kernel."""


@pytest.fixture
def grader():
    process = ForkedGrader(answer_or_misbehave, lambda folder: setattr(tempfile, "tempdir", folder))
    yield process
    process.close(_no_kernel_folders)


def test_a_grading_process_stays_warm_between_tasks_and_keeps_its_files_in_its_folder(grader):
    first = grader.run(TaskBudget(5.0), "answer")
    second = grader.run(TaskBudget(5.0), "answer")
    assert first == second == (grader.pid, str(grader.folder))
    assert grader.pid != os.getpid() and grader.alive


@pytest.mark.alone  # reaching its CPU limit before the backstop needs a free core
def test_a_task_that_spins_past_its_budget_ends_only_its_process_and_says_so(grader):
    started = time.monotonic()
    ended = grader.run(TaskBudget(1.0), "spin")
    assert time.monotonic() - started < 30
    assert isinstance(ended, OverBudget) and ended.verdict is Verdict.OVER_LIMIT and ended.students_fault
    assert not grader.alive


def test_a_task_that_blocks_is_ended_at_the_wall_clock_backstop(grader):
    ended = grader.run(TaskBudget(1.0), "block")
    assert isinstance(ended, OverBudget) and ended.verdict is Verdict.SAT_IDLE and not grader.alive


def test_a_task_that_raises_raises_here_and_its_process_serves_the_next_one(grader):
    with pytest.raises(LookupError, match="our own bug"):
        grader.run(TaskBudget(5.0), "raise")
    assert grader.run(TaskBudget(5.0), "answer")[0] == grader.pid


def test_a_process_lost_for_no_reason_of_its_budget_is_the_graders_to_retry(grader):
    with pytest.raises(GradingProcessLost):
        grader.run(TaskBudget(5.0), "die")
    assert not grader.alive


def test_closing_ends_the_process_and_removes_its_folder(grader):
    grader.close(_no_kernel_folders)
    assert not grader.alive and not grader.folder.exists()


def _write_while_it_exists(folder, seconds):
    """An ending kernel of the child: it writes into `folder` as fast as it can for `seconds`, while `folder` is there."""
    deadline, count = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        try:
            (folder / f"written-{count}").write_text("x")
        except FileNotFoundError:
            return
        count += 1


def test_a_folder_written_into_while_it_is_removed_is_removed_once_the_writing_stops(tmp_path):
    folder = tmp_path / "gradekit-run-x"
    folder.mkdir()
    writer = threading.Thread(target=_write_while_it_exists, args=(folder, 2 * REMOVE_PAUSE_SECONDS))
    writer.start()
    remove_folder(folder)
    writer.join()
    assert not folder.exists()


def _fork_from_a_daemon(results):
    process = ForkedGrader(answer_or_misbehave, lambda folder: None)
    try:
        results.put((process.run(TaskBudget(5.0), "answer")[0] == process.pid, process.run(TaskBudget(1.0), "spin")))
    finally:
        process.close(_no_kernel_folders)


@pytest.mark.alone  # its task spins to its CPU limit: it needs a free core
def test_a_daemonic_process_which_multiprocessing_will_not_let_have_children_forks_one():
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    daemon = context.Process(target=_fork_from_a_daemon, args=(results,), daemon=True)
    daemon.start()
    answered, ended = results.get(timeout=60)
    daemon.join(10)
    assert answered and isinstance(ended, OverBudget) and ended.verdict is Verdict.OVER_LIMIT


def test_nothing_is_on_disk_before_the_child_exists_so_a_failed_fork_or_a_parent_killed_then_leaves_nothing(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen_while_forking = []

    def no_more_processes():
        seen_while_forking.append(list(tmp_path.iterdir()))
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_more_processes)
    with pytest.raises(GradingProcessLost, match="no grading process could be forked"):
        ForkedGrader(answer_or_misbehave, lambda folder: None)
    assert seen_while_forking == [[]] and list(tmp_path.iterdir()) == []


def test_a_child_whose_parent_went_away_removes_its_own_folder_holding_the_scratch_course(grader):
    assert grader.run(TaskBudget(5.0), "answer")[0] == grader.pid
    (grader.folder / "scratch-course").mkdir()
    grader.connection.close()  # as a killed worker's end closes: the child is not asked to stop, it finds out
    deadline = time.monotonic() + 20
    while grader.alive and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not grader.alive and not grader.folder.exists()


def test_a_pipe_is_made_under_the_fork_lock_so_no_sibling_forked_meanwhile_holds_its_ends(monkeypatch):
    from gradekit.grading import forked_grader

    held = []
    real_pipe = multiprocessing.Pipe
    monkeypatch.setattr(multiprocessing, "Pipe", lambda: held.append(forked_grader._FORKING.locked()) or real_pipe())
    process = ForkedGrader(answer_or_misbehave, lambda folder: None)
    process.close(_no_kernel_folders)
    assert held == [True]
