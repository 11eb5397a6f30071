"""A task past its budget ends its worker and leaves a verdict saying whose failure it is."""

import concurrent.futures
import concurrent.futures.process
import multiprocessing
import time

import pytest

from gradekit.core.failures import GraderCause
from gradekit.core.status import Status
from gradekit.grading.cpu_clock import Verdict
from gradekit.grading.task_budget import OverBudget, TaskBudget, over_budget, within_budget


def spin():
    while True:
        pass


def sleep_long():
    time.sleep(3600)


def answer():
    return 42


def _in_a_worker(budget, verdict_file, task):
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        return pool.submit(within_budget, budget, str(verdict_file), task).result()


@pytest.mark.nbgrader
def test_a_task_within_its_budget_returns_and_leaves_no_verdict(tmp_path):
    assert _in_a_worker(TaskBudget(5.0), tmp_path / "verdict.json", answer) == 42
    assert over_budget(tmp_path / "verdict.json") is None


@pytest.mark.alone  # reaching 1 s of CPU before the backstop needs a free core
@pytest.mark.nbgrader
def test_a_task_that_spins_past_its_budget_ends_its_worker_as_the_students_timeout(tmp_path):
    with pytest.raises(concurrent.futures.process.BrokenProcessPool):
        _in_a_worker(TaskBudget(1.0), tmp_path / "verdict.json", spin)
    ended = over_budget(tmp_path / "verdict.json")
    assert ended is not None and ended.verdict is Verdict.OVER_LIMIT and ended.students_fault
    row = ended.row("amy")
    assert row.status is Status.FAILED and row.cause is None and "time budget" in row.message


@pytest.mark.nbgrader
def test_a_task_that_blocks_is_ended_at_the_wall_clock_backstop(tmp_path):
    started = time.monotonic()
    with pytest.raises(concurrent.futures.process.BrokenProcessPool):
        _in_a_worker(TaskBudget(1.0), tmp_path / "verdict.json", sleep_long)
    assert time.monotonic() - started < 60
    ended = over_budget(tmp_path / "verdict.json")
    assert ended is not None and ended.verdict is Verdict.SAT_IDLE and ended.students_fault


@pytest.mark.nbgrader
def test_a_task_that_sleeps_is_ended_once_its_idle_allowance_is_spent_long_before_the_backstop(tmp_path):
    budget = TaskBudget(600.0, idle_seconds=1.0)  # a backstop of half an hour, an idle allowance of a second
    started = time.monotonic()
    with pytest.raises(concurrent.futures.process.BrokenProcessPool):
        _in_a_worker(budget, tmp_path / "verdict.json", sleep_long)
    assert time.monotonic() - started < 60
    ended = over_budget(tmp_path / "verdict.json")
    # The task's clock reads the grader too, whose own waits count there: the grader's failure, tried again.
    assert ended is not None and ended.verdict is Verdict.IDLE_SPENT and not ended.students_fault
    row = ended.row("amy", attempts=3)
    assert row.status is Status.GRADER_ERROR and row.cause is GraderCause.STALLED
    assert "past its 1 s idle allowance" in row.message and "tried 3 times" in row.message


@pytest.mark.nbgrader
def test_a_task_that_computes_is_not_charged_idle_time(tmp_path):
    budget = TaskBudget(600.0, idle_seconds=0.5)
    assert _in_a_worker(budget, tmp_path / "verdict.json", spin_for_two_seconds) == "done"
    assert over_budget(tmp_path / "verdict.json") is None


def start_a_warm_parent():
    """The grading work a fresh process does first: start its warm parent (boxed), whose imports take seconds of CPU."""
    from gradekit.core.process_readings import CLOCK_TICKS, process_own_ticks
    from gradekit.grading.warm_kernels import clocked_parent, discard_zygote, zygote

    zygote()
    seconds = sum(process_own_ticks(pid) for pid in clocked_parent()[1]) / CLOCK_TICKS
    discard_zygote()  # a pool's worker ends without its exit handlers: its parent's folder goes now
    return seconds


@pytest.mark.nbgrader
def test_a_warm_parent_started_by_a_task_is_the_graders_work_neither_the_students_cpu_nor_idle(tmp_path, monkeypatch):
    from gradekit.grading import cpu_clock, task_budget

    for module in (cpu_clock, task_budget):  # a wall-clock backstop no loaded machine reaches: CPU and idle decide
        monkeypatch.setattr(module, "BACKSTOP_FACTOR", 100)
    budget = TaskBudget(0.5, idle_seconds=0.5)
    parent_seconds = _in_a_worker(budget, tmp_path / "verdict.json", start_a_warm_parent)
    assert over_budget(tmp_path / "verdict.json") is None
    assert parent_seconds > 2 * budget.cpu_seconds  # its imports alone would have spent the student's budget


def spin_for_two_seconds():
    end = time.process_time() + 2
    while time.process_time() < end:
        pass
    return "done"


@pytest.mark.unit
def test_a_worker_a_loaded_machine_held_back_is_the_graders_failure_not_a_zero():
    row = OverBudget(Verdict.OVERLOADED, "waited 9 s for a CPU").row("amy", attempts=3)
    assert row.status is Status.GRADER_ERROR and row.cause is GraderCause.OVERLOADED and "tried 3 times" in row.message


@pytest.mark.unit
def test_the_budget_is_derived_from_the_cells_time_limit():
    budget = TaskBudget.for_cells(60, notebooks=3)
    assert budget.cpu_seconds == 2 * 60 * 3 and budget.wall_seconds == 3 * budget.cpu_seconds
    assert TaskBudget.for_cells(60, notebooks=0) == TaskBudget.for_cells(60)
    assert TaskBudget.for_cells(60, attempts=3).cpu_seconds == 3 * TaskBudget.for_cells(60).cpu_seconds
    assert TaskBudget.for_cells(60).idle_seconds is None
    # Idle time is never the grader's to retry: the allowance grows with the notebooks, not the tries.
    assert TaskBudget.for_cells(60, notebooks=3, attempts=3, idle_seconds=10).idle_seconds == 3 * 10 * 3


@pytest.mark.nbgrader
def test_the_operating_systems_timer_ends_a_worker_whose_watchdog_cannot_run(tmp_path, monkeypatch):
    from gradekit.grading import task_budget

    monkeypatch.setattr(task_budget, "_watch", lambda *_: None)  # as if the task never let the thread run
    monkeypatch.setattr(task_budget, "LAST_RESORT_SECONDS", 2)  # the timer's margin past the backstop, shortened
    budget = TaskBudget(1.0)
    started = time.monotonic()
    with pytest.raises(concurrent.futures.process.BrokenProcessPool):
        _in_a_worker(budget, tmp_path / "verdict.json", sleep_long)
    seconds = time.monotonic() - started
    assert over_budget(tmp_path / "verdict.json") is None
    assert seconds < 60
    ended = task_budget.ended_by_timer(seconds, budget)
    assert ended is not None and ended.students_fault
    assert task_budget.ended_by_timer(budget.wall_seconds / 2, budget) is None
