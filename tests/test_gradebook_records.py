"""A submission's gradebook entries as plain values, and the names formgrader shows for its student."""

import datetime

import pytest
from nbgrader.api import MissingEntry

from gradekit.authoring.release import copy_source
from gradekit.core.course import load_course
from gradekit.grading.gradebook import open_gradebook
from gradekit.grading.gradebook_records import (
    CommentRecord,
    GradeRecord,
    NotebookRecord,
    SubmissionRecord,
    read_record,
)

pytestmark = pytest.mark.unit


def test_formgrader_gets_a_name_for_each_student_and_keeps_one_someone_set(tmp_path, monkeypatch):
    from gradekit.grading import gradebook_records
    from gradekit.grading.gradebook_records import SubmissionRecord, account_names, write_record

    accounts = {"ada": "Ada King Lovelace,,,", "plain": ""}

    def getpwnam(name):
        if name not in accounts:
            raise KeyError(name)
        return type("Account", (), {"pw_gecos": accounts[name]})()

    monkeypatch.setattr(gradebook_records.pwd, "getpwnam", getpwnam)
    assert account_names("ada") == ("Ada King", "Lovelace")
    assert account_names("plain") == ("", "plain") and account_names("no-account") == ("", "no-account")

    course = load_course().at(tmp_path)
    with open_gradebook(course) as gradebook:
        gradebook.add_assignment(course.assignment_id)
        gradebook.add_student("named", first_name="Grace", last_name="Hopper")
    for student in ("ada", "no-account", "named"):
        write_record(course, SubmissionRecord(student, None, ()))
    with open_gradebook(course) as gradebook:
        names = {s.id: (s.first_name, s.last_name) for s in gradebook.students}
    assert names == {"ada": ("Ada King", "Lovelace"), "no-account": ("", "no-account"), "named": ("Grace", "Hopper")}


def test_the_record_holds_what_nbgraders_own_objects_hold(tmp_path):
    """Two notebooks, grades and comments set by hand, one flagged and penalised; read back by columns."""
    course = copy_source(load_course(), tmp_path / "course", ())
    assignment = course.assignment_id
    with open_gradebook(course) as gradebook:
        gradebook.add_assignment(assignment, duedate=datetime.datetime(2026, 12, 18, 23, 0))
        for notebook in ("b_second", "a_first"):
            gradebook.add_notebook(notebook, assignment)
            gradebook.add_grade_cell("written", notebook, assignment, max_score=3, cell_type="markdown")
            gradebook.add_solution_cell("written", notebook, assignment)
            for cell in ("test_z", "test_a"):
                gradebook.add_grade_cell(cell, notebook, assignment, max_score=2, cell_type="code")
        gradebook.add_student("ada")
        gradebook.add_submission(assignment, "ada", timestamp=datetime.datetime(2026, 12, 19, 8, 30))
        gradebook.find_grade("test_z", "b_second", assignment, "ada").auto_score = 1.5
        gradebook.find_grade("written", "a_first", assignment, "ada").manual_score = 2.5
        gradebook.find_grade("written", "a_first", assignment, "ada").extra_credit = 0.5
        gradebook.find_comment("written", "a_first", assignment, "ada").manual_comment = "clear"
        flagged = gradebook.find_submission_notebook("b_second", assignment, "ada")
        flagged.flagged, flagged.late_submission_penalty = True, 1.0
        gradebook.db.commit()
        submission = gradebook.find_submission(assignment, "ada")
        expected = SubmissionRecord(
            student_id="ada",
            timestamp=submission.timestamp,
            notebooks=tuple(
                NotebookRecord(
                    name=n.name,
                    flagged=bool(n.flagged),
                    late_submission_penalty=n.late_submission_penalty,
                    grades=tuple(
                        GradeRecord(g.name, g.auto_score, g.manual_score, g.extra_credit, bool(g.needs_manual_grade))
                        for g in sorted(n.grades, key=lambda g: g.name)
                    ),
                    comments=tuple(
                        CommentRecord(c.name, c.auto_comment, c.manual_comment)
                        for c in sorted(n.comments, key=lambda c: c.name)
                    ),
                )
                for n in sorted(submission.notebooks, key=lambda n: n.name)
            ),
        )
    record = read_record(course, "ada")
    assert record == expected
    assert [n.name for n in record.notebooks] == ["a_first", "b_second"]
    assert [g.cell for g in record.notebooks[0].grades] == ["test_a", "test_z", "written"]
    assert record.notebooks[1].flagged and record.notebooks[1].late_submission_penalty == 1.0


def test_a_student_without_a_submission_is_a_missing_entry(tmp_path):
    course = copy_source(load_course(), tmp_path / "course", ())
    with open_gradebook(course) as gradebook:
        gradebook.add_assignment(course.assignment_id)
    with pytest.raises(MissingEntry):
        read_record(course, "nobody")


def _submission_rows(gradebook, assignment, student):
    """(notebook, cell, kind, its empty values) of every row a submission holds, ids aside."""
    submission = gradebook.find_submission(assignment, student)
    rows = set()
    for notebook in submission.notebooks:
        rows.add((notebook.name, "", "notebook", notebook.flagged, notebook.late_submission_penalty, None))
        for grade in notebook.grades:
            rows.add(
                (notebook.name, grade.name, "grade", grade.auto_score, grade.manual_score, grade.needs_manual_grade)
            )
        for comment in notebook.comments:
            rows.add((notebook.name, comment.name, "comment", comment.auto_comment, comment.manual_comment, None))
    return submission.timestamp, rows


def test_a_new_submission_gets_the_rows_nbgraders_own_add_submission_gives_it(tmp_path):
    from gradekit.grading.gradebook_records import add_submission

    course = copy_source(load_course(), tmp_path / "course", ())
    assignment = course.assignment_id
    handed_in = datetime.datetime(2026, 12, 19, 1, 30)
    with open_gradebook(course) as gradebook:
        gradebook.add_assignment(assignment)
        for notebook in ("first", "second"):
            gradebook.add_notebook(notebook, assignment)
            gradebook.add_grade_cell("checked", notebook, assignment, max_score=2, cell_type="code")
            gradebook.add_grade_cell("written", notebook, assignment, max_score=3, cell_type="markdown")
            gradebook.add_solution_cell("written", notebook, assignment)
            gradebook.add_task_cell("task", notebook, assignment, max_score=1, cell_type="markdown")
        gradebook.add_notebook("empty", assignment)
        for student in ("theirs", "ours"):
            gradebook.add_student(student)
        gradebook.add_submission(assignment, "theirs", timestamp=handed_in)
        add_submission(gradebook, assignment, "ours", handed_in)
        gradebook.db.commit()
        theirs, ours = (
            _submission_rows(gradebook, assignment, "theirs"),
            _submission_rows(gradebook, assignment, "ours"),
        )
    assert len(theirs[1]) == 13 and ours == theirs  # three notebooks; two with three grades and two comments
