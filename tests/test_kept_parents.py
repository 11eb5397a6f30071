"""A process's warm parents outlive its runs: lent to the next run's workers, ended when a run broke or left a kernel."""

import os
import time
from pathlib import Path

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.core.status import Status
from gradekit.grading import kept_parents, warm_kernels, worker_box
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.submission_grader import GradedSubmission
from gradekit.grading.task_budget import TaskBudget


def _row(student: str, parent: warm_kernels.Zygote) -> GradedSubmission:
    """A graded row whose message names the warm parent of the worker that made it."""
    return GradedSubmission(
        student_id=student,
        status=Status.GRADED,
        message=str(parent.host_pid),
        record=None,
        files=(),
        seconds=0.0,
        worker=f"test:{os.getpid()}",
    )


def name_the_parent(template_root, folder, student):
    """Stands in for grading: the worker's warm parent (lent, or its own), as the kernel's provisioner asks for it."""
    return _row(student, warm_kernels.zygote())


def die_once_holding_the_parent(template_root, folder, student):
    """The worker dies the first time, its lent parent in hand; on the next try it names its parent."""
    parent, mark = warm_kernels.zygote(), Path(template_root) / "died"
    if not mark.exists():
        mark.touch()
        os._exit(9)
    return _row(student, parent)


def leave_a_kernel_running(template_root, folder, student):
    """The worker starts a kernel from its parent and never ends it, as a worker cut short mid-notebook would."""
    path = {"metadata": {"path": str(template_root)}}
    client = NotebookClient(new_notebook(), kernel_manager_class=warm_kernels.WarmKernelManager, resources=path)
    client.km = client.create_kernel_manager()
    client.start_new_kernel(cwd=str(template_root))
    client.start_new_kernel_client()  # it answered: it runs
    _LEFT.append(client)  # nothing in this worker ends it: not even the collector
    return _row(student, warm_kernels.zygote())


_LEFT: list = []


# Three CPU seconds of work in the kernel, while its worker only waits for the reply.
COMPUTES = "import time\nend = time.process_time() + 3\nwhile time.process_time() < end:\n    pass"


def compute_in_a_kernel(template_root, folder, student):
    """The worker runs a notebook whose kernel computes for longer than the task's idle allowance."""
    path = {"metadata": {"path": str(template_root)}}
    notebook = new_notebook(cells=[new_code_cell(COMPUTES)])
    NotebookClient(notebook, kernel_manager_class=warm_kernels.WarmKernelManager, resources=path).execute()
    return _row(student, warm_kernels.zygote())


def spin_in_a_kernel(template_root, folder, student):
    """The worker's kernel spins until the task's budget ends the worker; the kernel's PID is left beside the task."""
    path = {"metadata": {"path": str(template_root)}}
    client = NotebookClient(new_notebook(), kernel_manager_class=warm_kernels.WarmKernelManager, resources=path)
    client.km = client.create_kernel_manager()
    client.start_new_kernel(cwd=str(template_root))
    client.start_new_kernel_client()
    (Path(template_root) / "kernel.pid").write_text(str(client.km.provisioner.pid))
    client.kc.execute("while True:\n    pass")
    time.sleep(600)


def _parents_of(tmp_path, task, students=("amy",), jobs=1):
    executor = LocalExecutor(jobs, task=task, lends_parents=True)
    rows = executor.grade_all(tmp_path, [(Path(tmp_path), student) for student in students])
    return {int(row.message) for row in rows}


@pytest.fixture
def no_kept_parents():
    """This test's process keeps none before or after (another test's would be lent here)."""
    kept_parents.end_kept()
    yield
    kept_parents.end_kept()


def _ended(host_pid: int, within: float = 5.0) -> bool:
    """Whether the process has ended, or does within `within` seconds (a killed one takes a moment)."""
    deadline = time.monotonic() + within
    while warm_kernels._running(host_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not warm_kernels._running(host_pid)


@pytest.mark.nbgrader
def test_the_next_run_is_lent_the_same_parent_and_a_run_whose_pool_broke_ends_it(tmp_path, no_kept_parents):
    (first,) = _parents_of(tmp_path, name_the_parent)
    assert _parents_of(tmp_path, name_the_parent) == {first}  # kept, its imports done, lent again
    (after_the_break,) = _parents_of(tmp_path, die_once_holding_the_parent)
    assert after_the_break != first and _ended(first)  # ended with its box as the pool broke
    assert _parents_of(tmp_path, name_the_parent) == {after_the_break}


@pytest.mark.nbgrader
def test_a_parent_that_comes_back_with_a_kernel_still_running_is_ended(tmp_path, no_kept_parents):
    (left_running,) = _parents_of(tmp_path, leave_a_kernel_running)
    assert _ended(left_running)
    assert _parents_of(tmp_path, name_the_parent) != {left_running}


@pytest.mark.nbgrader
def test_a_workers_budget_counts_the_work_of_its_kernels_in_the_parent_lent_to_it(tmp_path, no_kept_parents):
    """The kernel is no longer the worker's descendant: its CPU must still count as the task's work, not as idling."""
    executor = LocalExecutor(1, task=compute_in_a_kernel, budget=TaskBudget(60, idle_seconds=1), lends_parents=True)
    (row,) = executor.grade_all(tmp_path, [(tmp_path, "amy")])
    assert row.status is Status.GRADED, row.message  # not ended as idle, worker and parent with it


@pytest.mark.nbgrader
def test_a_worker_ended_by_its_budget_leaves_no_kernel_running_in_the_parent_lent_to_it(tmp_path, no_kept_parents):
    _parents_of(tmp_path, name_the_parent)  # a parent kept with its imports done: the budget is the kernel's
    executor = LocalExecutor(1, task=spin_in_a_kernel, budget=TaskBudget(2), lends_parents=True)
    rows = executor.grade_all(tmp_path, [(tmp_path, "amy")])
    row = next(rows)  # the run is not over: its parents are not given back yet
    try:
        assert row.status is not Status.GRADED
        assert _ended(int((tmp_path / "kernel.pid").read_text()))
    finally:
        assert list(rows) == []


@pytest.mark.notebook
def test_a_parent_back_from_a_worker_is_in_step_whatever_that_worker_left_unread(tmp_path):
    boxed = worker_box.unavailable_reason() is None
    parent = warm_kernels.start_zygote(boxed, grading_environment(), wait=False)
    try:
        assert kept_parents.back_in_step(parent)  # its first line ("ready") was never read: passed over
        parent.send({"clear": True, "echo": "a reply its worker died before reading"})
        assert kept_parents.back_in_step(parent)  # that reply is passed over too, up to this request's own
        assert parent._ask({"ended": 1}) == {"status": None}  # and the next request reads its own reply
    finally:
        parent.kill()
    assert not parent.running() and not parent.kernels_root.exists()


@pytest.mark.unit
def test_where_the_run_may_not_start_a_parent_nothing_is_lent(monkeypatch):
    def refuse(allow_unconfined):
        raise GraderFailure(GraderCause.NO_SANDBOX, "no box here")

    monkeypatch.setattr(worker_box, "require", refuse)
    assert kept_parents.lend(2, allow_unconfined=False) is None


@pytest.mark.unit
def test_each_worker_takes_a_parent_of_its_own_and_a_worker_past_the_last_takes_none(monkeypatch):
    adopted = []
    monkeypatch.setattr(kept_parents, "adopt", adopted.append)
    read_end, write_end = os.pipe()
    os.write(write_end, bytes([0, 1]))
    os.close(write_end)
    loan = kept_parents.Loan(("first", "second"), read_end)  # type: ignore[arg-type]
    try:
        for _ in range(3):
            loan.take()
    finally:
        os.close(read_end)
    assert adopted == ["first", "second"]
