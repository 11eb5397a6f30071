"""Beyond one machine: a Dask cluster grades into a PostgreSQL gradebook exactly as the local workers do.

The local workers are held to serial `nbgrader autograde` by the oracle (test_proof_oracle.py).
"""

import concurrent.futures
import dataclasses
import os
import threading
import time

import pytest
from cohort_fixtures import CHEATS, CRASHING_STUDENT, MALFORMED_STUDENT, twin_course
from cohort_fixtures import SMALL_COHORT_NOTEBOOK as NOTEBOOK
from services import dask_cluster, kill_a_busy_worker, postgres_server

from gradekit.core.status import Status
from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import DaskExecutor
from gradekit.grading.gradebook_records import read_record

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def distributed_run(small_cohort, tmp_path_factory):
    """The small cohort's honest students graded again on the cluster; the local workers graded them already."""
    local, _, _ = small_cohort
    shared = twin_course(
        local, tmp_path_factory.mktemp("shared-course"), skip={MALFORMED_STUDENT, CRASHING_STUDENT, *CHEATS}
    )
    with postgres_server() as url, dask_cluster(workers=2) as address:
        on_postgres = dataclasses.replace(shared, db_url=url)
        executor = DaskExecutor(address)
        try:
            result = grade_cohort(on_postgres, executor, (NOTEBOOK,))
        finally:
            executor.close()
        records = {row.student_id: read_record(on_postgres, row.student_id) for row in result.rows}
    return local, result, records


def test_cluster_grades_match_the_local_workers(distributed_run):
    local, result, records = distributed_run
    assert len(result.rows) == 5 and not result.failed
    for student, record in records.items():
        assert record == read_record(local, student), student


def test_work_ran_on_both_cluster_workers(distributed_run):
    _, result, _ = distributed_run
    workers = {row.worker for row in result.rows}
    assert len(workers) == 2
    assert not any(worker.endswith(f":{os.getpid()}") for worker in workers)


def test_a_worker_lost_mid_grade_is_replaced_and_its_submission_graded_again(small_cohort, tmp_path):
    local, _, _ = small_cohort
    shared = twin_course(local, tmp_path / "shared", skip={MALFORMED_STUDENT, CRASHING_STUDENT, *CHEATS})
    with dask_cluster(workers=2) as address:
        executor = DaskExecutor(address)
        try:
            with concurrent.futures.ThreadPoolExecutor(1) as background:
                grading = background.submit(grade_cohort, shared, executor, (NOTEBOOK,))
                killed = kill_a_busy_worker(executor.client)
                result = grading.result()
            executor.client.wait_for_workers(2, timeout=90)
            workers_after = set(executor.client.scheduler_info()["workers"])
        finally:
            executor.close()
    assert killed not in workers_after and len(workers_after) == 2  # the nanny started a fresh worker
    assert len(result.rows) == 5 and all(row.status is Status.GRADED for row in result.rows)
    for row in result.rows:
        assert read_record(shared, row.student_id) == read_record(local, row.student_id), row.student_id


RELEASE_THE_STUCK = threading.Event()


def stuck_on_one(budget, template_root, folder, student):
    """Stands in for the cluster's task: one never comes back (a worker hung beyond its budget's reach) until released."""
    from gradekit.grading.submission_grader import GradedSubmission

    if student == "stuck":
        RELEASE_THE_STUCK.wait()
    return GradedSubmission(
        student_id=student, status=Status.GRADED, message="", record=None, files=(), seconds=0.0, worker="cluster"
    )


def test_a_cluster_run_stops_waiting_for_a_submission_past_its_budget_and_reports_its_row(tmp_path, monkeypatch):
    from distributed import LocalCluster

    from gradekit.core.failures import GraderCause
    from gradekit.core.settings import CourseKit
    from gradekit.grading import executors
    from gradekit.grading.grading_run import GradingRun

    GradingRun(CourseKit(), cell_timeout=1, protected_roots=()).write(tmp_path)  # a budget of seconds
    monkeypatch.setattr(executors, "grade_within_budget", stuck_on_one)
    monkeypatch.setattr(executors, "LAST_RESORT_SECONDS", 2)  # the wait's margin past the backstop, shortened
    students = ("amy", "stuck", "ben")
    with LocalCluster(n_workers=3, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        executor = DaskExecutor(cluster.scheduler_address)
        try:
            started = time.monotonic()
            outcomes = {g.student_id: g for g in executor.grade_all(tmp_path, [(tmp_path, s) for s in students])}
            waited = time.monotonic() - started
        finally:
            RELEASE_THE_STUCK.set()
            executor.close()
    assert waited < 120  # the budget's backstop and a margin, not for ever
    assert outcomes["amy"].status is outcomes["ben"].status is Status.GRADED
    stuck = outcomes["stuck"]
    assert stuck.status is Status.GRADER_ERROR and stuck.cause is GraderCause.STALLED
    assert "did not return it within" in stuck.message


SENT = []  # (student, try) as the stand-in below was asked, in the test's own process


def ended_on_the_worker(budget, template_root, folder, student):
    """Stands in for the cluster's task: the budget ended one submission's grading process, a loaded worker another's."""
    from gradekit.grading.cpu_clock import Verdict
    from gradekit.grading.submission_grader import GradedSubmission
    from gradekit.grading.task_budget import OverBudget

    SENT.append(student)
    if student == "spins":
        return OverBudget(Verdict.OVER_LIMIT, "used 7.0 s of CPU")
    if student == "held-back":
        return OverBudget(Verdict.OVERLOADED, "waited 20.0 s for a CPU")
    return GradedSubmission(
        student_id=student, status=Status.GRADED, message="", record=None, files=(), seconds=0.0, worker="cluster"
    )


def test_a_verdict_from_the_worker_is_the_students_timeout_or_the_graders_failure_sent_again(tmp_path, monkeypatch):
    from distributed import LocalCluster

    from gradekit.core.failures import GraderCause
    from gradekit.core.settings import CourseKit
    from gradekit.grading import executors
    from gradekit.grading.grading_run import GradingRun

    kit = CourseKit(retry_backoff_seconds=0.1, grader_attempts=3)
    GradingRun(kit, cell_timeout=1, protected_roots=()).write(tmp_path)
    monkeypatch.setattr(executors, "grade_within_budget", ended_on_the_worker)
    students = ("amy", "spins", "held-back")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        executor = DaskExecutor(cluster.scheduler_address)
        try:
            outcomes = {g.student_id: g for g in executor.grade_all(tmp_path, [(tmp_path, s) for s in students])}
        finally:
            executor.close()
    assert outcomes["amy"].status is Status.GRADED
    spins, held_back = outcomes["spins"], outcomes["held-back"]
    assert spins.status is Status.FAILED and spins.cause is None and spins.attempts == 1
    assert "ran past its time budget" in spins.message and "more CPU time" in spins.message
    assert held_back.status is Status.GRADER_ERROR and held_back.cause is GraderCause.OVERLOADED
    assert held_back.attempts == 3 and "tried 3 times" in held_back.message
    assert SENT.count("spins") == 1 and SENT.count("held-back") == 3


STUCK = "a-stuck-student"
# The run's cell limit: with one try, a budget of 12 CPU seconds and 36 of wall clock (task_budget.py). The honest
# submission is the first of a freshly forked grading process, so its budget also pays for that process's start (its
# scratch grader, its zygote importing torch); a budget of 6 CPU seconds ran out on a loaded machine.
CELL_SECONDS = 6


class ArrivalTimes:
    """An executor that notes when each row came back."""

    def __init__(self, executor):
        self.executor, self.arrived = executor, {}

    @property
    def workers(self):
        return self.executor.workers

    def grade_all(self, template_root, tasks):
        for row in self.executor.grade_all(template_root, tasks):
            self.arrived[row.student_id] = time.monotonic()
            yield row


def test_a_submission_stuck_in_the_graders_own_work_is_ended_by_its_budget_and_its_worker_grades_the_next(
    course, manifest, tmp_path
):
    from cohort_fixtures import add_first_answer, cohort_course

    from gradekit.core.failures import GraderCause
    from gradekit.grading.task_budget import LAST_RESORT_SECONDS, PAST_BUDGET, TaskBudget
    from gradekit.proof.subjects import REFERENCE_ID

    def stall_the_grader_for(student):
        """On the worker: the grader's own work never ends for `student` (as a reply that never ends would)."""
        from gradekit.grading import executors

        grade = executors.grade_task

        def spin_for_one(template_root, folder, whom):
            while whom == student:
                pass
            return grade(template_root, folder, whom)

        executors.grade_task = spin_for_one

    narrow = manifest.only([NOTEBOOK])
    # One try: the verdict's row is final, so the stuck row comes back before the honest one whatever it says.
    scratch = dataclasses.replace(cohort_course(course, narrow, tmp_path / "course", controls=0), grader_attempts=1)
    add_first_answer(scratch, narrow, NOTEBOOK, STUCK, "# the largest submission: dealt first\n" * 2000)
    with dask_cluster(workers=1) as address:
        executor = DaskExecutor(address)
        timed = ArrivalTimes(executor)
        try:
            executor.client.run(stall_the_grader_for, STUCK)
            started = time.monotonic()
            result = grade_cohort(scratch, timed, (NOTEBOOK,), cell_timeout=CELL_SECONDS, only={STUCK, REFERENCE_ID})
        finally:
            executor.close()
    rows = {row.student_id: row for row in result.rows}
    stuck, honest = rows[STUCK], rows[REFERENCE_ID]
    if stuck.status is Status.FAILED:  # the student's timeout, in the verdict's words
        assert stuck.cause is None and stuck.message.startswith(PAST_BUDGET) and "more CPU time" in stuck.message
    else:  # a loaded machine held the process back: the grader's failure
        assert stuck.status is Status.GRADER_ERROR and stuck.cause is GraderCause.OVERLOADED
    # One worker with one thread: the honest submission came back after the stuck one, so the same thread graded it.
    assert timed.arrived[STUCK] < timed.arrived[REFERENCE_ID]
    assert honest.status is Status.GRADED and honest.grades.cells, honest.message
    assert all(cell.score == cell.max_score for cell in honest.grades.cells)
    budget = TaskBudget.for_cells(CELL_SECONDS, 1, 1)
    old_patience = budget.wall_seconds * 2 + LAST_RESORT_SECONDS  # when the coordinator gave up on both before
    assert timed.arrived[REFERENCE_ID] - started < old_patience
