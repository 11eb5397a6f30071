"""What a regrade changed: unit tests on rows, then a real regrade of the demo class after a check was tightened."""

import csv

import pytest

from gradekit.core.grades import CellGrade, SubmissionGrades, WrittenGrade
from gradekit.core.rows import CohortRow
from gradekit.core.status import Status
from gradekit.grading.regrade_diff import REGRADE_FILE, regrade_diff, write_regrade_csv

unit = pytest.mark.unit


def grades(student: str, *scores: float, written: float | None = None) -> SubmissionGrades:
    cells = tuple(
        CellGrade("010_history", f"test_{i}", score, 2.0, diagnosed=("stale-grad",) if score == 0 else ())
        for i, score in enumerate(scores)
    )
    answers = (WrittenGrade("090_decisions", "answer_hand_graph", written, 3.0),)
    return SubmissionGrades(student, cells, written=answers)


def row(graded: SubmissionGrades | None, student: str = "") -> CohortRow:
    status = Status.GRADED if graded else Status.GRADER_ERROR
    return CohortRow(student_id=graded.student_id if graded else student, status=status, message="", grades=graded)


@unit
def test_a_first_grading_lists_nobody_and_says_so():
    diff = regrade_diff({}, [row(grades("ada", 2, 2))])
    assert diff.first_grading and diff.changed == () and diff.headline.startswith("first grading")


@unit
def test_only_students_whose_cells_moved_are_listed_with_before_after_cells_and_the_new_diagnosis():
    before = {"ada": grades("ada", 2, 2), "bo": grades("bo", 2, 0), "cy": grades("cy", 0, 2)}
    after = [row(grades("cy", 0, 2)), row(grades("ada", 2, 0)), row(grades("bo", 2, 2))]
    diff = regrade_diff(before, after)
    assert [(c.student_id, c.before, c.after) for c in diff.changed] == [("ada", 4, 2), ("bo", 2, 4)]
    assert diff.unchanged == 1
    (ada_cell,) = diff.changed[0].cells
    assert (ada_cell.cell, ada_cell.before, ada_cell.after, ada_cell.diagnosis) == ("test_1", 2, 0, "stale-grad")
    assert diff.changed[1].cells[0].diagnosis == "full marks"
    assert diff.changed[0].line.startswith("ada: 4 -> 2 (010_history/test_1: 2 -> 0 of 2); now: 010_history/test_1")
    assert diff.headline.startswith("regrade: 2 student(s) changed score, 1 unchanged")


@unit
def test_written_answers_a_ta_graded_are_counted_as_kept_and_said_so():
    before = {"ada": grades("ada", 2, 2, written=3.0), "bo": grades("bo", 2, 2, written=1.5), "cy": grades("cy", 2)}
    after = [row(grades("ada", 0, 2, written=3.0)), row(grades("bo", 2, 2, written=1.5)), row(grades("cy", 2))]
    diff = regrade_diff(before, after)
    assert diff.changed[0].written_line == "written answers kept: 3 points entered by a TA"
    assert (diff.written_kept, diff.written_kept_answers) == (4.5, 2)
    assert "written answers kept: 4.5 points entered by a TA (2 answers)" in diff.headline


@unit
def test_a_row_the_run_could_not_grade_is_not_compared_and_a_new_student_starts_from_nothing():
    before = {"ada": grades("ada", 2, 2)}
    diff = regrade_diff(before, [row(None, "ada"), row(grades("new", 2, 0))])
    (new,) = diff.changed
    assert (new.student_id, new.before, new.after, diff.unchanged) == ("new", 0, 2, 0)
    assert [c.before for c in new.cells] == [None, None]


@unit
def test_regrade_csv_has_one_row_per_changed_student_and_a_first_grading_removes_an_old_one(tmp_path):
    diff = regrade_diff({"ada": grades("ada", 2, 2, written=3.0)}, [row(grades("ada", 2, 0, written=3.0))])
    with write_regrade_csv(tmp_path, diff).open(newline="") as table:
        (line,) = csv.DictReader(table)
    assert (line["student_id"], line["before"], line["after"], line["written_points_kept"]) == ("ada", "7", "5", "3")
    assert line["cells_changed"] == "010_history/test_1: 2 -> 0 of 2"
    assert line["diagnosis"] == "010_history/test_1: stale-grad"
    assert write_regrade_csv(tmp_path, regrade_diff({}, [row(grades("ada", 2))])) is None
    assert not (tmp_path / REGRADE_FILE).exists()

