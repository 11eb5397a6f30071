"""A forked grading worker drives an event loop of its own, whatever loop its parent held when it forked."""

import asyncio
import concurrent.futures
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_core.utils import ensure_event_loop, run_sync

from gradekit.grading.forked_workers import worker_context

pytestmark = pytest.mark.nbgrader

ROOT = Path(__file__).resolve().parent.parent
# The order that hung: a kernel run in the test process, then a cohort graded by forked workers.
HUNG_ORDER = (
    "tests/test_crossing_kernel.py",
    "tests/test_grader_failures.py::test_a_lost_worker_is_replaced_and_the_submission_graded_again",
)
HUNG_ORDER_SECONDS = 1200  # minutes on a loaded 2-core machine; the hang never ended


async def _answer() -> int:
    await asyncio.sleep(0)
    return 42


def _the_loop_a_kernel_call_uses(parents: int) -> tuple[bool, int]:
    """In the worker: whether jupyter_core's loop is the parent's (by address, which a fork keeps), and a call's result."""
    return id(ensure_event_loop()) == parents, run_sync(_answer)()


def _in_a_worker(parents: int) -> tuple[bool, int]:
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=worker_context()) as pool:
        return pool.submit(_the_loop_a_kernel_call_uses, parents).result(timeout=60)


def test_a_worker_of_a_parent_that_drove_a_kernel_call_has_its_own_loop():
    run_sync(_answer)()  # as a kernel run in the coordinator leaves it: jupyter_core holds this thread's loop
    parents = ensure_event_loop()
    assert _in_a_worker(id(parents)) == (False, 42)
    assert not parents.is_closed() and parents.run_until_complete(_answer()) == 42  # the parent's loop is whole


def test_a_worker_forked_while_its_parents_loop_runs_drives_its_own():
    async def fork_from_the_running_loop() -> tuple[bool, int]:
        return _in_a_worker(id(ensure_event_loop()))  # jupyter_core's slot holds the running loop

    # A plain fork hands over a loop that counts as running: "This event loop is already running".
    assert asyncio.run(fork_from_the_running_loop()) == (False, 42)


def test_the_two_tests_that_hung_pass_in_the_order_that_hung():
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *HUNG_ORDER]
    ran = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=HUNG_ORDER_SECONDS)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-4000:]
    assert "2 passed" in ran.stdout, ran.stdout[-4000:]
