"""Beyond one machine: a Dask cluster grades into a PostgreSQL gradebook, exactly like serial nbgrader."""
import dataclasses
import os

import pytest

from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import DaskExecutor
from gradekit.grading.gradebook_records import read_record
from gradekit.nbgrader_cli import run_nbgrader

from cohort_fixtures import cohort_course, serial_twin
from services import dask_cluster, postgres_server

pytestmark = pytest.mark.cluster

NOTEBOOK = "010_history"


@pytest.fixture(scope="module")
def distributed_run(course, manifest, tmp_path_factory):
    narrow = manifest.only([NOTEBOOK])
    shared = cohort_course(course, narrow, tmp_path_factory.mktemp("shared-course"))
    serial = serial_twin(shared, tmp_path_factory.mktemp("serial"), skip=set())
    run_nbgrader(serial, "autograde", serial.assignment_id, "--force")
    with postgres_server() as url, dask_cluster(workers=2) as address:
        on_postgres = dataclasses.replace(shared, db_url=url)
        executor = DaskExecutor(address)
        try:
            result = grade_cohort(on_postgres, executor, (NOTEBOOK,))
        finally:
            executor.close()
        records = {row.student_id: read_record(on_postgres, row.student_id) for row in result.rows}
    return serial, result, records


def test_cluster_grades_match_serial_nbgrader(distributed_run):
    serial, result, records = distributed_run
    assert len(result.rows) >= 9 and not result.failed
    for student, record in records.items():
        assert record == read_record(serial, student), student


def test_work_ran_on_both_cluster_workers(distributed_run):
    _, result, _ = distributed_run
    workers = {row.worker for row in result.rows}
    assert len(workers) == 2
    assert not any(worker.endswith(f":{os.getpid()}") for worker in workers)
