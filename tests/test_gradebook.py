import pytest

from gradekit.core.course import load_course
from gradekit.core.grades import CellGrade, SubmissionGrades
from gradekit.grading.gradebook import open_gradebook, read_grades

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


def test_a_notebook_without_a_graded_copy_is_named_unsubmitted(tmp_path):
    import nbformat

    course = load_course().at(tmp_path)
    with open_gradebook(course) as gradebook:
        gradebook.add_assignment(course.assignment_id)
        for notebook in ("010_a", "020_b"):
            gradebook.add_notebook(notebook, course.assignment_id)
            gradebook.add_grade_cell("test_f", notebook, course.assignment_id, max_score=2, cell_type="code")
        gradebook.add_student("ann")
        gradebook.add_submission(course.assignment_id, "ann")
    graded = course.autograded_dir / "ann" / course.assignment_id
    graded.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), graded / "010_a.ipynb")  # only 010_a was handed in
    grades = read_grades(course, "ann")
    assert [c.notebook for c in grades.cells] == ["010_a", "020_b"]
    assert grades.unsubmitted == ("020_b",)
    assert grades.submitted("010_a") and not grades.submitted("020_b")
