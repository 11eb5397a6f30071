import pytest

from gradekit.course import load_course
from gradekit.grading.gradebook import CellGrade, SubmissionGrades, open_gradebook, read_grades

pytestmark = pytest.mark.unit


def test_a_student_without_a_submission_is_reported_missing(tmp_path):
    course = load_course().at(tmp_path)
    with open_gradebook(course) as gradebook:
        gradebook.add_assignment(course.assignment_id)
    grades = read_grades(course, "nobody")
    assert grades.missing and grades.cells == ()


def test_scores_are_summed_from_cells():
    grades = SubmissionGrades(
        "s",
        (CellGrade("n", "test_a", 2, 2, ()), CellGrade("n", "test_b", 0, 3, ("x-y-z",))),
    )
    assert (grades.score, grades.max_score) == (2, 5)
    assert grades.diagnosed == ("x-y-z",)
    assert grades.cell("n", "test_a").full and grades.cell("n", "test_b").zero
    assert grades.cell("n", "test_c") is None
