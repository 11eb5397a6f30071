"""Parallel cohort grading: rows, graded files, broken submissions, progress.

That its grades equal serial `nbgrader autograde`'s is the oracle's to show (test_proof_oracle.py).
"""

import io

import pytest
from cohort_fixtures import CHEATS, CRASHING_STUDENT, MALFORMED_STUDENT

from gradekit.authoring.release import clone_workspace
from gradekit.core.notes import NoteKind
from gradekit.core.status import Status
from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import LocalExecutor, grade_task
from gradekit.grading.internal_errors import LOG_NAME
from gradekit.grading.progress import Progress

pytestmark = pytest.mark.nbgrader

NOTEBOOK = "010_history"


@pytest.fixture(scope="module")
def graded_cohort(small_cohort):
    return small_cohort


def test_graded_notebooks_land_in_the_course_autograded_folder(graded_cohort):
    parallel, result, _ = graded_cohort
    for row in result.rows:
        if row.status is Status.GRADED:
            assert (parallel.autograded_dir / row.student_id / "autograd" / f"{NOTEBOOK}.ipynb").is_file()


def test_a_malformed_submission_fails_on_its_own_row(graded_cohort):
    parallel, result, _ = graded_cohort
    broken = next(row for row in result.rows if row.student_id == MALFORMED_STUDENT)
    assert broken.status is Status.FAILED and broken.grades is None and broken.message
    others = [row for row in result.rows if row.student_id not in (MALFORMED_STUDENT, CRASHING_STUDENT, *CHEATS)]
    assert all(row.status is Status.GRADED for row in others)


def test_a_submission_that_kills_its_kernel_is_reported_on_its_own_row(graded_cohort):
    _, result, _ = graded_cohort
    crashed = next(row for row in result.rows if row.student_id == CRASHING_STUDENT)
    # The cells from the crash on score zero; the row says why.
    assert crashed.status is Status.GRADED and crashed.grades.score == 0
    stopped = [note for note in crashed.notes if note.kind is NoteKind.KERNEL_STOPPED]
    assert stopped and "the kernel died while this cell ran" in stopped[0].text


def test_rows_are_ordered_by_student_and_progress_is_reported(graded_cohort):
    _, result, progress = graded_cohort
    ids = [row.student_id for row in result.rows]
    assert ids == sorted(ids)
    lines = progress.strip().splitlines()
    assert len(lines) == len(ids)
    assert lines[-1].startswith(f"[{len(ids)}/{len(ids)}]") and f"failed so far: {len(result.failed)}" in lines[-1]
    assert "left" in lines[0]


def grade_unless_bug(template_root, folder, student):
    """Real grading, except that our own code breaks on the student called "bug"."""
    if student == "bug":
        raise ValueError("a bug in the grader")
    return grade_task(template_root, folder, student)


def test_a_failure_of_the_grader_is_one_row_and_its_traceback_is_logged_beside_the_class_report(small_cohort, tmp_path):
    scratch = clone_workspace(small_cohort[0], tmp_path / "course")  # its release and gradebook, no submission
    for student in ("ada", "bug"):
        folder = scratch.submitted_dir / student / scratch.assignment_id
        folder.mkdir(parents=True)
        (folder / f"{NOTEBOOK}.ipynb").write_bytes((scratch.release_dir / f"{NOTEBOOK}.ipynb").read_bytes())
    result = grade_cohort(scratch, LocalExecutor(2, task=grade_unless_bug), (NOTEBOOK,), Progress(2, io.StringIO()))
    ada, bug = result.rows
    log = scratch.root / "class-report" / LOG_NAME
    assert ada.status is Status.GRADED and bug.status is Status.GRADER_ERROR
    assert "ValueError: a bug in the grader" in bug.message and str(log) in bug.message
    text = log.read_text()
    assert text.startswith("==== bug: internal error while grading ====") and "grade_unless_bug" in text
    assert "ada" not in text
