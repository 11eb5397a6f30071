"""A term's deadline on a real cohort: on time, extended, late and past the cut-off, graded by nbgrader and refreshed."""

from __future__ import annotations

import csv
import dataclasses
import datetime

import cohort_fixtures
import nbformat
import pytest
from cohort_fixtures import hand_in

from gradekit.authoring.release import new_workspace
from gradekit.commands.extend import extend
from gradekit.commands.ta_pipeline import grade_and_report, refresh_reports, report_dir
from gradekit.core.course import REPO_ROOT
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.gradebook import open_gradebook
from gradekit.lms.scores import read_scores

pytestmark = pytest.mark.nbgrader

NOTEBOOK = "010_history"
TA_PAGE = REPO_ROOT / "docs" / "pages" / "ta.md"
UNTIL = "2026-12-22T23:00:00+00:00"  # the extension the TA page grants
UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 11, 20, 23, 0, tzinfo=UTC)
EXTENDED = cohort_fixtures.page_command(TA_PAGE, "python -m gradekit extend").student  # the page's student
HANDED_IN = {  # student -> hand-in time
    "ontime": DUE - datetime.timedelta(hours=1),
    EXTENDED: DUE + datetime.timedelta(days=1),  # extended by the TA page's command (to 2026-12-22): not late
    "late": DUE + datetime.timedelta(days=1, seconds=1),  # two started days: 20% of the score
    "cutoff": DUE + datetime.timedelta(days=8),  # past the week's cut-off: 0
}


@pytest.fixture(scope="module")
def term(course, manifest, tmp_path_factory):
    only = manifest.only([NOTEBOOK])
    dated = dataclasses.replace(course, due_date=DUE)
    scratch = new_workspace(dated, tmp_path_factory.mktemp("term") / "course", (NOTEBOOK,))
    for student, when in HANDED_IN.items():
        hand_in(scratch, only, NOTEBOOK, student, when)
    extension = page_command("python -m gradekit extend")
    assert extend(scratch, extension.student, extension.until, extension.why) == 0
    result = grade_and_report(scratch, only, LocalExecutor(2))
    return scratch, only, result


def page_command(start: str):
    return cohort_fixtures.page_command(TA_PAGE, start)


def students_csv(course) -> dict[str, dict[str, str]]:
    with (report_dir(course) / "students.csv").open(newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


def test_each_deadline_and_the_policy_give_the_exact_penalty_in_students_csv(term):
    course, manifest, result = term
    full = manifest.points_of(NOTEBOOK)
    assert [row.status.label for row in result.rows] == ["graded"] * 4
    table = students_csv(course)
    expected = {
        "ontime": ("0", "0", "no", ""),
        EXTENDED: ("0", "0", "no", UNTIL),
        "late": (str(24 * 60), f"{0.2 * full:g}", "no", ""),
        "cutoff": (str(8 * 24 * 60), f"{full:g}", "yes", ""),
    }
    for student, (minutes, penalty, past, until) in expected.items():
        row = table[student]
        assert (row["minutes_late"], row["late_penalty"], row["past_cutoff"], row["extended_until"]) == (
            minutes,
            penalty,
            past,
            until,
        ), student
        assert row["score"] == f"{full:g}"
    assert table["late"]["score_after_penalty"] == f"{0.8 * full:g}"
    assert table["cutoff"]["score_after_penalty"] == "0"


def test_grades_csv_and_the_lms_scores_count_the_penalty_from_the_one_due_date(term):
    course, manifest, _ = term
    full = manifest.points_of(NOTEBOOK)
    with (course.root / "grades.csv").open(newline="") as handle:
        exported = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert {row["duedate"] for row in exported.values()} == {"2026-11-20 23:00:00"}
    assert {s: float(exported[s]["late_submission_penalty"]) for s in HANDED_IN} == pytest.approx(
        {"ontime": 0.0, EXTENDED: 0.0, "late": 0.2 * full, "cutoff": full}
    )
    with open_gradebook(course) as gradebook:
        lms = read_scores(gradebook, [course.assignment_id], per_exercise=False)
    assert {s: lms.scores[s][0] for s in HANDED_IN} == pytest.approx(
        {"ontime": full, EXTENDED: full, "late": 0.8 * full, "cutoff": 0.0}
    )


def test_the_report_lists_the_extension_and_tells_the_ta_who_passed_the_cut_off(term):
    course, manifest, _ = term
    page = (report_dir(course) / "report.html").read_text()
    assert "ill for a week" in page and UNTIL in page
    assert "past the late policy&#x27;s cut-off: the submission scores 0" in page
    assert f"late penalty {0.2 * manifest.points_of(NOTEBOOK):g} points" in page


def test_students_read_the_due_date_atop_each_notebook_and_the_penalty_on_their_feedback(term):
    course, manifest, _ = term
    released = nbformat.read(course.release_dir / f"{NOTEBOOK}.ipynb", as_version=4)
    assert released.cells[0].source.startswith("**Due Friday 20 November 2026, 23:00 UTC.**")
    feedback = (course.feedback_dir / "late" / course.assignment_id / f"{NOTEBOOK}.html").read_text()
    assert f"Late submission penalty (Score: -{0.2 * manifest.points_of(NOTEBOOK):g})" in feedback
    assert (
        "Late submission penalty"
        not in (course.feedback_dir / EXTENDED / course.assignment_id / f"{NOTEBOOK}.html").read_text()
    )


def test_a_refresh_from_the_gradebook_gives_the_same_files_without_grading(term, capsys):
    course, manifest, _ = term
    before = (report_dir(course) / "students.csv").read_text()
    grades = (course.root / "grades.csv").read_text()
    refresh = page_command("python -m gradekit grade --reports-only")
    assert refresh.reports_only
    rows = refresh_reports(course, manifest, refresh.jobs)
    said = capsys.readouterr().out
    assert [row.student_id for row in rows] == sorted(HANDED_IN)
    assert "4 submissions read from the gradebook (nothing regraded): 4 graded" in said
    assert "cutoff: handed in past the late policy's cut-off: the submission scores 0" in said
    assert (report_dir(course) / "students.csv").read_text() == before
    assert (course.root / "grades.csv").read_text() == grades
