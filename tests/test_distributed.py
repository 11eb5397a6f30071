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


def stuck_on_one(template_root, folder, student):
    """Stands in for the grading task on the cluster: one submission keeps its worker until it is released."""
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
    monkeypatch.setattr(executors, "grade_task", stuck_on_one)
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
