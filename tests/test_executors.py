"""A grading worker that dies or raises takes down only the submission that caused it."""

import inspect
import os
import re
import signal
import time
from pathlib import Path

import pytest

from gradekit.core.failures import GraderCause
from gradekit.core.status import Status
from gradekit.grading import executors
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.submission_grader import GradedSubmission
from gradekit.grading.task_budget import TaskBudget

pytestmark = pytest.mark.nbgrader


def graded_here(student: str) -> GradedSubmission:
    """What the stand-ins below give back for a submission they let through: graded, by this worker."""
    return GradedSubmission(
        student_id=student,
        status=Status.GRADED,
        message="",
        record=None,
        files=(),
        seconds=0.0,
        worker=f"test:{os.getpid()}",
    )


def kill_on_poison(template_root, folder, student):
    """Stands in for real grading: the worker process dies on the poisoned submission."""
    if student == "poison":
        os._exit(9)
    return graded_here(student)


def fail_inside_the_grader(template_root, folder, student):
    """Stands in for real grading: our own code raises on one submission."""
    if student == "bug":
        settings = {}
        return settings["cell_timeout"]
    return graded_here(student)


def _grade(tmp_path, task, students):
    tasks = [(Path(tmp_path), name) for name in students]
    return {g.student_id: g for g in LocalExecutor(2, task=task).grade_all(tmp_path, tasks)}


def test_only_the_culprit_is_not_scored_when_a_worker_dies_every_time(tmp_path):
    outcomes = _grade(tmp_path, kill_on_poison, ("amy", "ben", "poison", "cleo", "dan", "eve"))
    assert set(outcomes) == {"amy", "ben", "poison", "cleo", "dan", "eve"}
    poison = outcomes["poison"]
    assert poison.status is Status.GRADER_ERROR and poison.cause is GraderCause.WORKER_LOST
    assert "worker" in poison.message and "tried 3 times" in poison.message
    assert all(g.status is Status.GRADED for name, g in outcomes.items() if name != "poison")


def test_a_failure_of_our_own_code_comes_back_with_the_workers_traceback(tmp_path):
    outcomes = _grade(tmp_path, fail_inside_the_grader, ("amy", "bug"))
    bug = outcomes["bug"]
    assert bug.status is Status.GRADER_ERROR and bug.cause is GraderCause.INTERNAL_ERROR
    assert "KeyError: 'cell_timeout'" in bug.message
    assert "fail_inside_the_grader" in bug.internal_error and 'settings["cell_timeout"]' in bug.internal_error
    assert outcomes["amy"].status is Status.GRADED and not outcomes["amy"].internal_error


def leave_temporary_files(template_root, folder, student):
    """Stands in for real grading: a worker leaves a scratch folder behind, as grading does until its exit."""
    import tempfile

    Path(tempfile.mkdtemp(prefix="gradekit-worker-"), "hidden-tests.ipynb").write_text("{}")
    return graded_here(student)


def test_nothing_a_worker_left_in_the_temporary_folder_outlives_the_run(tmp_path, monkeypatch):
    """Pool workers exit without their exit handlers: the run's folder of temporary files is removed for them."""
    import tempfile

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    outcomes = _grade(tmp_path, leave_temporary_files, ("amy", "ben", "cleo"))
    assert {g.status for g in outcomes.values()} == {Status.GRADED}
    assert list(temporary.iterdir()) == []


def sleep_on_one(template_root, folder, student):
    """Stands in for real grading: one submission only sleeps; each of the others computes for a moment."""
    if student == "sleeps":
        time.sleep(3600)
    end = time.process_time() + 1.0
    while time.process_time() < end:
        pass
    return graded_here(student)


def test_one_students_ended_budget_costs_the_others_no_try_and_no_grading_one_by_one(tmp_path):
    """Each time its budget ends the sleeper's worker, the pool is started afresh for the rest, who lose no try."""
    students = ("sleeps", "amy", "ben", "cleo", "dan", "eve", "fay", "gus")
    tasks = [(Path(tmp_path), name) for name in students]
    executor = LocalExecutor(2, sleep_on_one, TaskBudget(60.0, idle_seconds=1.0))
    outcomes = {g.student_id: g for g in executor.grade_all(tmp_path, tasks)}
    sleeper = outcomes["sleeps"]  # idle past the task's allowance: the grader's failure, tried three times
    assert sleeper.status is Status.GRADER_ERROR and sleeper.cause is GraderCause.STALLED, sleeper.message
    assert "idle allowance" in sleeper.message and "tried 3 times" in sleeper.message
    honest = [outcomes[name] for name in students[1:]]
    assert all(g.status is Status.GRADED and g.attempts == 1 for g in honest)
    # Seven seconds of work beside a sleeper ended within two: graded over several shared pools of two
    # workers (a new pool after each of its three ends), not in a fresh pool each, one by one.
    assert 2 <= len({g.worker for g in honest}) <= 8 and len({g.worker for g in honest}) < len(honest)


def hang_on_one(template_root, folder, student):
    """Stands in for real grading: one submission keeps its worker for ever, spinning or blocked."""
    import time

    if student == "spins":
        while True:
            pass
    if student == "blocks":
        time.sleep(3600)
    return graded_here(student)


@pytest.mark.alone  # its spinner must reach 1 s of CPU before the backstop: it needs a free core
def test_a_worker_past_its_budget_is_replaced_its_row_is_the_students_timeout_and_the_rest_are_graded(tmp_path):
    import time

    students = ("amy", "spins", "ben", "blocks", "cleo")
    tasks = [(Path(tmp_path), name) for name in students]
    started = time.monotonic()
    outcomes = {g.student_id: g for g in LocalExecutor(2, hang_on_one, TaskBudget(1.0)).grade_all(tmp_path, tasks)}
    assert time.monotonic() - started < 120  # the run ends; without the budget it never would
    assert set(outcomes) == set(students)
    assert all(outcomes[name].status is Status.GRADED for name in ("amy", "ben", "cleo"))
    for name in ("spins", "blocks"):
        assert outcomes[name].status is Status.FAILED and outcomes[name].cause is None
        assert "ran past its time budget" in outcomes[name].message
    assert "more CPU time" in outcomes["spins"].message
    assert "sat past the wall-clock backstop" in outcomes["blocks"].message


def test_a_cluster_worker_hands_out_a_live_warm_grading_process_never_one_that_died_idle():
    from gradekit.grading.executors import _GradingProcesses

    processes = _GradingProcesses()
    first, generation = processes.take()
    processes.give_back(first, generation)
    os.kill(first.pid, signal.SIGKILL)  # died while idle: the out-of-memory killer, say
    deadline = time.monotonic() + 10
    while first.alive and time.monotonic() < deadline:
        time.sleep(0.05)
    second, generation = processes.take()
    try:
        assert second is not first and second.alive
        assert not first.folder.exists()  # the dead one was closed, its files removed
    finally:
        processes.give_back(second, generation)
        processes.retire_all()


@pytest.mark.parametrize("ending", ["consumer stops", "error"])
def test_a_cluster_run_that_ends_early_still_has_its_workers_forget_its_template(monkeypatch, ending):
    """A regrade on the same cluster must never find the previous run's checks kept warm on its workers."""
    from gradekit.grading import executors

    forgotten = []
    monkeypatch.setattr(executors, "forget_on_cluster", lambda client, template: forgotten.append(template))

    def graded(self, template_root, tasks):
        yield "the first row"
        raise RuntimeError("the coordinator's own failure")

    monkeypatch.setattr(executors.DaskExecutor, "_graded", graded)
    executor = object.__new__(executors.DaskExecutor)  # no cluster: only the run's ending is under test
    executor.client = None
    rows = executor.grade_all(Path("template"), [])
    assert next(rows) == "the first row"
    if ending == "consumer stops":
        rows.close()
    else:
        with pytest.raises(RuntimeError):
            next(rows)
    assert forgotten == [Path("template")]


def test_a_grading_process_freezes_what_its_grader_holds_and_collects_young_objects_less_often(monkeypatch, tmp_path):
    import gc

    from gradekit.grading import executors

    monkeypatch.setattr(executors, "ScratchGrader", lambda template, scratch: object())
    monkeypatch.setattr(executors, "_graders", {})
    monkeypatch.setattr(os, "environ", dict(os.environ))  # the grader's environment replaces this process's
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    before = gc.get_threshold()
    try:
        executors._grader_for(str(tmp_path / "template"))
        assert gc.get_threshold() == (executors.GENERATION_0_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_grading_process_imports_at_its_start_what_torchs_assert_close_imports_at_its_first_call():
    """Else a pre-check's first student of each grading process waits about half a second for that import."""
    from torch.testing import _comparison

    lazily = re.findall(r"^\s+from (torch[\w.]+) import", inspect.getsource(_comparison), re.MULTILINE)
    assert lazily and set(lazily) <= set(executors.IMPORTED_BY_CHECKS)
