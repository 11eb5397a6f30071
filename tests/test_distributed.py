"""Beyond one machine: a Dask cluster grades into a PostgreSQL gradebook exactly as the local workers do.

The local workers are held to serial `nbgrader autograde` by the oracle (test_proof_oracle.py).
"""
import dataclasses
import os

import pytest

from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import DaskExecutor, LocalExecutor
from gradekit.grading.gradebook_records import read_record

from cohort_fixtures import cohort_course, twin_course
from services import dask_cluster, postgres_server

pytestmark = pytest.mark.cluster

NOTEBOOK = "010_history"


@pytest.fixture(scope="module")
def distributed_run(course, manifest, tmp_path_factory):
    narrow = manifest.only([NOTEBOOK])
    shared = cohort_course(course, narrow, tmp_path_factory.mktemp("shared-course"))
    local = twin_course(shared, tmp_path_factory.mktemp("local"), skip=set())
    grade_cohort(local, LocalExecutor(2), (NOTEBOOK,))
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
