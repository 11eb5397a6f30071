"""One submission's outcome and the scratch grader's plain helpers."""

import pytest

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.status import Status
from gradekit.grading.submission_grader import GradedSubmission, grader_error, nbgrader_error

pytestmark = pytest.mark.unit


def test_an_outcome_built_by_position_is_refused():
    with pytest.raises(TypeError, match="positional"):
        GradedSubmission("ada", Status.GRADED, "", None, (), 1.0)  # type: ignore[misc]


def test_a_grader_error_scores_nothing_and_says_how_often_it_was_tried():
    failure = GraderFailure(GraderCause.KERNEL_START, "no kernel")
    row = grader_error("ada", failure, attempts=3, seconds=2.0, worker="vm:1")
    assert (row.status, row.record, row.files, row.cause, row.attempts) == (
        Status.GRADER_ERROR,
        None,
        (),
        GraderCause.KERNEL_START,
        3,
    )
    assert row.message == f"{failure} (tried 3 times)"
    assert row.ok is False


def test_nbgrader_error_keeps_its_error_lines_once_each():
    log = "[AutogradeApp | ERROR] There was an error\n[AutogradeApp | ERROR] There was an error\nTraceback\n"
    assert nbgrader_error({"success": False, "log": log}) == "There was an error"
