"""Late penalties worked out again from the gradebook's scores as they are now (grading/refresh.py)."""

import datetime

import pytest

from gradekit.authoring.release import copy_source
from gradekit.grading.gradebook import open_gradebook
from gradekit.grading.refresh import reapply_late_penalties

pytestmark = pytest.mark.unit

DUE = datetime.datetime(2026, 12, 18, 23, 0)  # the gradebook keeps UTC without a zone
NOTEBOOK = "090_decisions"


def penalties(course) -> dict[str, float | None]:
    with open_gradebook(course) as gradebook:
        return {
            student: gradebook.find_submission_notebook(NOTEBOOK, course.assignment_id, student).late_submission_penalty
            for student in ("ada", "bo")
        }


def test_a_penalty_stored_before_a_ta_scored_is_worked_out_again_for_the_named_students_only(course, tmp_path):
    scratch = copy_source(course, tmp_path / "course", ())  # the course's policy: all of it from a week late on
    with open_gradebook(scratch) as gradebook:
        gradebook.add_assignment(scratch.assignment_id, duedate=DUE)
        gradebook.add_notebook(NOTEBOOK, scratch.assignment_id)
        gradebook.add_grade_cell("answer", NOTEBOOK, scratch.assignment_id, max_score=3, cell_type="markdown")
        for student in ("ada", "bo"):
            gradebook.add_student(student)
            gradebook.add_submission(scratch.assignment_id, student, timestamp=DUE + datetime.timedelta(days=8))
            gradebook.find_grade("answer", NOTEBOOK, scratch.assignment_id, student).manual_score = 2.5
            # As a grading worker stored it: its copy of the gradebook had no score from the TA yet.
            gradebook.find_submission_notebook(NOTEBOOK, scratch.assignment_id, student).late_submission_penalty = 0.0
        gradebook.db.commit()
    assert reapply_late_penalties(scratch, ["ada"]) == 1
    assert penalties(scratch) == {"ada": 2.5, "bo": 0.0}
    assert reapply_late_penalties(scratch) == 1  # everyone's: only bo's was still stale
    assert penalties(scratch) == {"ada": 2.5, "bo": 2.5}
