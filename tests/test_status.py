"""Every status walks through every consumer: a status a consumer does not handle fails here.

Row statuses are enum members that still read as plain words in CSV files and
printed rows; what each means (has grades, needs a TA, counts in the class's
figures, how urgent, which exit code) is read off the member.
"""

import csv
import io
import json
import pickle

import pytest
from class_report_fixtures import CATALOG, FORGED_EQ, MANIFEST, ROWS, graded

from gradekit.authoring.solutions import NegativeControl
from gradekit.commands.ta_pipeline import status_counts
from gradekit.core.failures import GraderCause
from gradekit.core.outcome import Outcome
from gradekit.core.status import ReplyStatus, Status, run_exit_code
from gradekit.grading.cohort import CohortResult
from gradekit.grading.progress import Progress
from gradekit.grading.submission_grader import GradedSubmission
from gradekit.proof.packing import SyntheticStudent
from gradekit.proof.rules import status_violations
from gradekit.proof.subjects import Subject
from gradekit.report.class_figures import class_report, reasons_to_reach_out
from gradekit.report.class_report import write_class_report
from gradekit.report.item_statistics import exercise_stats
from gradekit.report.tables import student_table

pytestmark = pytest.mark.unit

EVERY_STATUS = pytest.mark.parametrize("status", list(Status), ids=str)
WHY = "the reason this row is what it is"
CONTROL = NegativeControl("010-f__wrong", "010_x", "f", "m-one-x", ("test_f",), "def f(): pass")


def row_with(status: Status, student: str = "zoe") -> Outcome:
    """A full-marks row of `status`: with grades only when the status has them, findings when it is withheld."""
    if not status.has_grades:
        cause = GraderCause.KERNEL_START if status.owner == "grader" else None
        return Outcome(student_id=student, status=status, message=WHY, grades=None, cause=cause)
    full = graded(student, 2, 3, 1, 5, status=status, findings=(FORGED_EQ,) if status.withheld else ())
    return Outcome(
        student_id=full.student_id,
        status=status,
        message=WHY if status.needs_ta else "",
        grades=full.grades,
        findings=full.findings,
    )


def test_each_status_reads_as_its_word():
    assert [str(s) for s in Status] == ["graded", "flagged", "failed", "grader error"]
    assert f"[{Status.FAILED:<7}]" == "[failed ]"
    assert Status("flagged") is Status.FLAGGED


def test_each_status_has_its_reply_word_and_the_reply_words_stay_as_the_wire_has_them():
    words = ["graded", "held for a TA", "not graded", "grader error", "not shown", "not run"]
    assert [str(word) for word in ReplyStatus] == words
    assert [ReplyStatus.of(status).status for status in Status] == list(Status)
    assert [word for word in ReplyStatus if word.status is None] == [ReplyStatus.NOT_SHOWN, ReplyStatus.NOT_RUN]
    assert json.dumps({"status": ReplyStatus.HELD_FOR_A_TA}) == '{"status": "held for a TA"}'
    assert ReplyStatus.GRADER_ERROR == "grader error" == Status.GRADER_ERROR


def test_a_csv_row_holds_the_word():
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["ada", Status.GRADED])
    assert buffer.getvalue().strip() == "ada,graded"


def test_statuses_have_distinct_urgencies_and_only_a_clean_run_exits_0():
    assert len({s.urgency for s in Status}) == len(Status)
    assert run_exit_code([]) == 0
    assert run_exit_code([Status.GRADED, Status.FLAGGED]) == 4
    assert run_exit_code([Status.GRADED, Status.FLAGGED, Status.FAILED]) == 3  # failed outweighs flagged
    assert run_exit_code(list(Status)) == 5  # the grader's own error outweighs all: grade again first
    assert len({s.exit_code for s in Status}) == len(Status)


@EVERY_STATUS
def test_the_meaning_holds_together(status):
    assert pickle.loads(pickle.dumps(status)) is status
    assert status.label and status.headline
    assert (status.exit_code != 0) == status.needs_ta == bool(status.reason)
    assert run_exit_code([Status.GRADED, status]) == status.exit_code
    if status.counts_as_submitted:  # its scores are final: stored and not waiting for anyone
        assert status.has_grades and not status.needs_ta
    assert status.failed + status.withheld + (not status.needs_ta) == 1
    assert status.owner in ("student", "grader") if status.needs_ta else status.owner == ""
    if status.owner == "grader":  # never a score, never counted, never a flag on the student
        assert not status.has_grades and not status.counts_as_submitted and status.exit_code not in (3, 4)


@EVERY_STATUS
def test_the_progress_line_names_and_counts_it(status):
    stream = io.StringIO()
    progress = Progress(1, stream)
    submission = GradedSubmission(student_id="zoe", status=status, message=WHY, record=None, files=(), seconds=1.0)
    progress.update(submission)
    assert stream.getvalue().startswith(f"[1/1] {status.label:<7} zoe")
    assert (progress.failed, progress.flagged) == (status.failed, status.withheld)
    assert submission.ok == status.has_grades


@EVERY_STATUS
def test_the_cohort_result_sorts_it(status):
    row = row_with(status)
    result = CohortResult((row,), 1.0)
    assert (row in result.failed, row in result.flagged) == (status.failed, status.withheld)


@EVERY_STATUS
def test_the_student_table_shows_its_word(status):
    row = row_with(status)
    grades = [row.grades] if row.grades else []
    table = student_table(grades, CATALOG, {row.student_id: status})
    assert (status.label in table) == bool(grades)


@EVERY_STATUS
def test_the_class_report_counts_it_and_reaches_out_when_a_ta_is_needed(tmp_path, status):
    rows = (*ROWS, row_with(status))
    page = write_class_report(tmp_path, MANIFEST, rows, CATALOG).read_text()
    headline = page.split('id="headline"')[1].split("</div></div>")[0]
    for each in Status:
        count = sum(1 for row in rows if row.status is each)
        assert f"<b>{count}</b>{each.headline}" in headline
    with open(tmp_path / "students.csv", newline="") as handle:
        zoe_line = {line["student_id"]: line for line in csv.DictReader(handle)}["zoe"]
    assert (zoe_line["status"], zoe_line["owner"]) == (status.label, status.owner)
    assert zoe_line["cause"] == ("kernel_start" if status.owner == "grader" else "")
    reasons = dict(reasons_to_reach_out(class_report(tmp_path, MANIFEST, rows, CATALOG)))
    zoe = next((why for row, why in reasons.items() if row.student_id == "zoe"), ())
    assert any(why.startswith(f"{status.reason}: ") for why in zoe) == status.needs_ta


@EVERY_STATUS
def test_item_statistics_count_it_only_when_it_counts_as_submitted(status):
    before = {item.exercise: item.submitted for item in exercise_stats(MANIFEST, ROWS)}
    after = {item.exercise: item.submitted for item in exercise_stats(MANIFEST, (*ROWS, row_with(status)))}
    assert all(after[name] == before[name] + status.counts_as_submitted for name in before)


@EVERY_STATUS
def test_the_proof_blames_it_only_when_a_ta_is_needed(status):
    student = SyntheticStudent("zoe", (Subject("control-a", ("010_x",), CONTROL),))
    violations = status_violations(row_with(status), student)
    assert bool(violations) == status.needs_ta
    assert all(v.reason.startswith(f"{status.label}: ") for v in violations)


@pytest.mark.parametrize("status", list(Status), ids=lambda status: status.name)
def test_the_grade_commands_summary_counts_it_by_its_headline(status):
    summary = status_counts((row_with(Status.GRADED, "amy"), row_with(status)))
    assert f"1 {status.headline}" in summary or (status is Status.GRADED and summary == "2 graded")
