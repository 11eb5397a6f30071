"""A cohort row is built by name: its text fields cannot be swapped by position."""

import pytest

from gradekit.core.rows import CohortRow
from gradekit.core.status import Status

pytestmark = pytest.mark.unit


def test_a_row_built_by_position_is_refused():
    with pytest.raises(TypeError, match="positional"):
        CohortRow("ada", Status.GRADED, "", None)  # type: ignore[misc]


def test_a_row_without_grades_scores_zero():
    row = CohortRow(student_id="ada", status=Status.FAILED, message="malformed notebook JSON", grades=None)
    assert (row.score, row.worker, row.attempts, row.cause) == (0.0, "", 1, None)
