"""What a regrade changed: unit tests on rows, then a real regrade of the demo class after a check was tightened."""

import csv

import pytest
from cohort_fixtures import (
    TIGHTENED,
    TIGHTENING,
    edit_hidden_tests,
    regrade_rows,
    students_failing,
    tighten_check,
    tightest_cell,
)

from gradekit.core.grades import CellGrade, SubmissionGrades, WrittenGrade
from gradekit.core.outcome import Outcome
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


def row(graded: SubmissionGrades | None, student: str = "") -> Outcome:
    status = Status.GRADED if graded else Status.GRADER_ERROR
    return Outcome(student_id=graded.student_id if graded else student, status=status, message="", grades=graded)


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


# A real regrade of the demo class (`make demo`'s course folder, on two notebooks; 090 has written answers).
NOTEBOOKS = ("010_history", "090_decisions")
TA_SCORE = 1.5  # what the TA gives one written answer in formgrader before the regrade


@pytest.fixture(scope="module")
def demo_class(course, manifest, tmp_path_factory):
    """The demo's course folder graded once by the demo, as the folder's own configuration reads it."""
    from gradekit.authoring.solutions import load_controls
    from gradekit.commands.demo import demo_course, run_demo
    from gradekit.commands.demo_cohort import demo_cohort
    from gradekit.commands.ta_pipeline import course_here

    narrow = manifest.only(list(NOTEBOOKS))
    demo = demo_course(course, narrow, tmp_path_factory.mktemp("regrade") / "demo-course")
    assert run_demo(demo, narrow, jobs=2) == 0
    return course_here(demo.root), narrow, demo_cohort(narrow, load_controls(narrow))


def grade_a_written_answer(course, student: str) -> None:
    """What a TA does in formgrader: a score for the student's first written answer."""
    from gradekit.grading.gradebook import open_gradebook, read_grades

    answer = read_grades(course, student).written[0]
    with open_gradebook(course) as gradebook:
        gradebook.find_grade(answer.cell, answer.notebook, course.assignment_id, student).manual_score = TA_SCORE
        gradebook.db.commit()


@pytest.mark.nbgrader
def test_a_tightened_check_regrades_exactly_the_students_who_passed_it_and_keeps_the_tas_scores(demo_class, capsys):
    from gradekit.commands.ta_pipeline import grade_and_report, report_dir
    from gradekit.core.grading_stamp import checks_digest
    from gradekit.core.row_record import load_rows
    from gradekit.grading.executors import LocalExecutor
    from gradekit.grading.gradebook import read_grades

    course, manifest, students = demo_class
    cell = tightest_cell(manifest, students)
    everyone = {s.student_id for s in students}
    expected = sorted(everyone - students_failing(students, TIGHTENED, cell))
    marked = next(s.student_id for s in students if s.written and s.student_id in expected)
    grade_a_written_answer(course, marked)
    first = load_rows(report_dir(course))
    capsys.readouterr()

    tighten_check(course, cell)
    grade_and_report(course, manifest, LocalExecutor(2))
    said = capsys.readouterr().out

    changed = regrade_rows(course)
    assert sorted(changed) == expected
    points = next(t.points for t in manifest.test_cells_of(TIGHTENED) if t.cell == cell)
    for student, line in changed.items():
        assert line["cells_changed"] == f"{TIGHTENED}/{cell}: {points:g} -> 0 of {points:g}", line
        assert "tightened: no answer passes this check now" in line["diagnosis"], line
        assert f"  {student}: " in said
    assert changed[marked]["written_points_kept"] == f"{TA_SCORE:g}"
    assert f"regrade: {len(expected)} student(s) changed score, {len(everyone) - len(expected)} unchanged" in said
    assert f"written answers kept: {TA_SCORE:g} points entered by a TA (1 answers)" in said
    assert read_grades(course, marked).written[0].score == TA_SCORE  # nbgrader kept the TA's score
    report = (report_dir(course) / "report.html").read_text()
    assert "What the regrade changed" in report and all(f">{s}<" in report for s in expected)
    records = load_rows(report_dir(course))
    digest = checks_digest(course.source_dir, NOTEBOOKS)
    assert {r.graded_by.checks_digest for r in records.values()} == {digest}
    assert {r.graded_by.checks_digest for r in first.values()} != {digest}


@pytest.mark.nbgrader
def test_grade_student_regrades_only_them_and_an_unknown_student_changes_nothing(demo_class, capsys):
    from gradekit.commands.cli import main
    from gradekit.commands.ta_pipeline import report_dir
    from gradekit.core.row_record import load_rows
    from gradekit.grading.gradebook import read_grades

    course, manifest, students = demo_class
    cell = tightest_cell(manifest, students)
    edit_hidden_tests(course, cell, lambda source: source.replace(TIGHTENING, ""))  # the check is fixed again
    ids = sorted(s.student_id for s in students)
    before = {student: read_grades(course, student) for student in ids}
    records = load_rows(report_dir(course))
    report = (report_dir(course) / "report.html").read_text()

    assert main(["grade", "--course", str(course.root), "--student", "nobody", "--jobs", "1"]) == 2
    assert "no submission of nobody" in capsys.readouterr().err
    assert load_rows(report_dir(course)) == records and (report_dir(course) / "report.html").read_text() == report

    passed = sorted(set(ids) - students_failing(students, TIGHTENED, cell))
    chosen = passed[0]
    assert main(["grade", "--course", str(course.root), "--student", chosen, "--jobs", "1"]) in (0, 4)
    said = capsys.readouterr().out
    assert list(regrade_rows(course)) == [chosen]
    assert "regrade: 1 student(s) changed score, 0 unchanged" in said
    after = load_rows(report_dir(course))
    assert sorted(after) == ids  # the reports still cover the whole cohort
    assert after[chosen].graded_by != records[chosen].graded_by
    for student in ids:
        if student != chosen:
            assert read_grades(course, student) == before[student]
            assert after[student].graded_by == records[student].graded_by
    assert read_grades(course, chosen).score > before[chosen].score
