"""Parallel cohort grading leaves the gradebook exactly as serial `nbgrader autograde` does."""
import io

import pytest

from gradekit.cohort import grade_cohort, submitted_students
from gradekit.executors import LocalExecutor
from gradekit.gradebook_records import read_record
from gradekit.nbgrader_cli import run_nbgrader
from gradekit.progress import Progress

from cohort_fixtures import MALFORMED_STUDENT, add_malformed_submission, cohort_course, serial_twin

NOTEBOOK = "010_history"


@pytest.fixture(scope="module")
def graded_cohort(course, manifest, tmp_path_factory):
    narrow = manifest.only([NOTEBOOK])
    parallel = cohort_course(course, narrow, tmp_path_factory.mktemp("parallel"))
    add_malformed_submission(parallel, NOTEBOOK)
    serial = serial_twin(parallel, tmp_path_factory.mktemp("serial"), skip={MALFORMED_STUDENT})
    stream = io.StringIO()
    result = grade_cohort(parallel, LocalExecutor(2), (NOTEBOOK,), Progress(len(submitted_students(parallel)), stream))
    run_nbgrader(serial, "autograde", serial.assignment_id, "--force")
    return parallel, serial, result, stream.getvalue()


def test_gradebook_matches_serial_nbgrader_for_every_student(graded_cohort):
    parallel, serial, result, _ = graded_cohort
    students = [row.student_id for row in result.rows if row.student_id != MALFORMED_STUDENT]
    assert len(students) >= 9
    for student in students:
        assert read_record(parallel, student) == read_record(serial, student), student


def test_graded_notebooks_land_in_the_course_autograded_folder(graded_cohort):
    parallel, serial, result, _ = graded_cohort
    for row in result.rows:
        if row.status == "graded":
            assert (parallel.autograded_dir / row.student_id / "autograd" / f"{NOTEBOOK}.ipynb").is_file()


def test_a_malformed_submission_fails_on_its_own_row(graded_cohort):
    parallel, _, result, _ = graded_cohort
    (broken,) = result.failed
    assert broken.student_id == MALFORMED_STUDENT and broken.grades is None
    assert broken.message
    assert all(row.status == "graded" for row in result.rows if row is not broken)


def test_rows_are_ordered_by_student_and_progress_is_reported(graded_cohort):
    _, _, result, progress = graded_cohort
    ids = [row.student_id for row in result.rows]
    assert ids == sorted(ids)
    lines = progress.strip().splitlines()
    assert len(lines) == len(ids)
    assert lines[-1].startswith(f"[{len(ids)}/{len(ids)}]") and "failed so far: 1" in lines[-1]
    assert "left" in lines[0]


def test_an_unreadable_timestamp_is_reported_before_nbgrader_sees_it(tmp_path):
    from gradekit.scratch_grader import timestamp_problem

    (tmp_path / "timestamp.txt").write_text("yesterday at noon")
    assert "timestamp.txt does not hold a date" in timestamp_problem(tmp_path)
    (tmp_path / "timestamp.txt").write_text("2026-11-29 10:00:00.000000 UTC")
    assert timestamp_problem(tmp_path) is None
