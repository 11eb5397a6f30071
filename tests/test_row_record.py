"""The last grading run's words of each row, saved beside the report and read back by a refresh."""

import pytest

from gradekit.core.failures import GraderCause
from gradekit.core.grades import SubmissionGrades
from gradekit.core.grading_stamp import GradingStamp
from gradekit.core.notes import Finding, FindingKind, Note, NoteKind
from gradekit.core.outcome import Outcome
from gradekit.core.row_record import ROWS_FILE, load_rows, save_rows, with_grades_of
from gradekit.core.status import Status

pytestmark = pytest.mark.unit

ROWS = (
    Outcome(
        student_id="ada",
        status=Status.FLAGGED,
        message="grade withheld for a TA: 010_history: the guard saw a replaced function",
        grades=SubmissionGrades("ada", ()),
        worker="host:12",
        notes=(Note(NoteKind.NOT_IN_ASSIGNMENT, "", items=("notes.html", "torch.py")),),
        findings=(Finding(FindingKind.GUARD_SAW, "010_history", "replaced expect", ("a cell",)),),
        graded_by=GradingStamp("0123456789abcdef", "gradekit-fedcba9876543210", "2026-12-03T08:00:00+00:00"),
    ),
    Outcome(
        student_id="bo",
        status=Status.GRADER_ERROR,
        message="the grader failed",
        grades=None,
        cause=GraderCause.KERNEL_START,
        attempts=3,
    ),
)


def test_every_rows_words_come_back_as_they_were_saved_without_grades(tmp_path):
    save_rows(tmp_path, ROWS)
    loaded = load_rows(tmp_path)
    assert list(loaded) == ["ada", "bo"]
    for row in ROWS:
        assert loaded[row.student_id] == Outcome(**{**row.__dict__, "grades": None})


@pytest.mark.parametrize("text", ["{not json", '{"ada": {"status": "no such status"}}', "[1, 2]"])
def test_a_record_that_does_not_read_gives_no_rows_and_no_error(tmp_path, text):
    (tmp_path / ROWS_FILE).write_text(text)
    assert load_rows(tmp_path) == {}
    assert load_rows(tmp_path / "never-written") == {}


def test_a_refreshed_row_keeps_its_words_and_takes_todays_grades_and_flag():
    earlier = Outcome(**{**ROWS[0].__dict__, "grades": None})
    regraded = SubmissionGrades("ada", ())
    still_flagged = Outcome(student_id="ada", status=Status.FLAGGED, message="withheld", grades=regraded)
    kept = with_grades_of(earlier, still_flagged)
    assert (kept.grades, kept.status, kept.message, kept.notes) == (
        regraded,
        Status.FLAGGED,
        ROWS[0].message,
        ROWS[0].notes,
    )
    cleared = with_grades_of(earlier, Outcome(student_id="ada", status=Status.GRADED, message="", grades=regraded))
    assert (cleared.status, cleared.message, cleared.findings) == (Status.GRADED, "", ROWS[0].findings)


def test_a_record_written_before_rows_said_what_graded_them_reads_with_no_stamp(tmp_path):
    save_rows(tmp_path, ROWS)
    text = (tmp_path / ROWS_FILE).read_text().replace('"graded_by"', '"graded_by_unknown"')
    (tmp_path / ROWS_FILE).write_text(text)
    assert [row.graded_by for row in load_rows(tmp_path).values()] == [None, None]


def test_a_refreshed_row_keeps_the_record_of_the_run_that_graded_it():
    earlier = Outcome(**{**ROWS[0].__dict__, "grades": None})
    today = Outcome(student_id="ada", status=Status.FLAGGED, message="", grades=SubmissionGrades("ada", ()))
    assert with_grades_of(earlier, today).graded_by == ROWS[0].graded_by
