"""A grading kernel cannot reach the reference solutions, even when it tries."""

import pytest
from cohort_fixtures import CHEATS, SMALL_COHORT_NOTEBOOK

pytestmark = pytest.mark.nbgrader


def test_answers_that_import_the_reference_earn_nothing(small_cohort):
    _, result, _ = small_cohort
    rows = {row.student_id: row for row in result.rows}
    for student in CHEATS:
        grades = rows[student].grades
        assert grades is not None, rows[student].message
        assert grades.cell(SMALL_COHORT_NOTEBOOK, "test_float64_leaf").score == 0, student
        # The rest of the notebook is the reference and still earns its points.
        assert grades.cell(SMALL_COHORT_NOTEBOOK, "test_square_sum_grad").full, student
