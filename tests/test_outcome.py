"""One outcome type, built by name: its text fields cannot be swapped by position, and a worker's extra parts stay behind."""

import pytest

from gradekit.core.grades import SubmissionGrades
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status
from gradekit.grading.submission_grader import GradedSubmission

pytestmark = pytest.mark.unit


def test_an_outcome_built_by_position_is_refused():
    with pytest.raises(TypeError, match="positional"):
        Outcome("ada", Status.GRADED, "", None)  # type: ignore[misc]


def test_an_outcome_without_grades_scores_zero():
    row = Outcome(student_id="ada", status=Status.FAILED, message="malformed notebook JSON")
    assert (row.score, row.worker, row.attempts, row.cause, row.grades, row.graded_by) == (0.0, "", 1, None, None, None)


def test_a_workers_outcome_leaves_its_record_and_files_behind_as_a_plain_outcome():
    graded = GradedSubmission(
        student_id="ada",
        status=Status.FLAGGED,
        message="grade withheld for a TA",
        worker="vm:7",
        attempts=2,
        record=None,
        files=(("010_history.ipynb", b"{}"),),
        seconds=3.5,
        internal_error="Traceback ...",
    )
    plain = graded.as_outcome()
    assert type(plain) is Outcome and isinstance(graded, Outcome)
    assert plain == Outcome(
        student_id="ada", status=Status.FLAGGED, message="grade withheld for a TA", worker="vm:7", attempts=2
    )
    assert not hasattr(plain, "files") and not hasattr(plain, "record")


def test_an_outcome_with_grades_scores_what_the_gradebook_holds():
    grades = SubmissionGrades("ada", ())
    assert Outcome(student_id="ada", status=Status.GRADED, message="", grades=grades).score == grades.score
