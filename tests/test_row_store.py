"""The coordinator's course gradebook for a run (grading/row_store.py): a row stored, re-priced and read back
in one commit, the same gradebook as storing, re-pricing and reading each in its own, and no lock held between rows."""

import dataclasses
import datetime
import sqlite3

import nbformat
import pytest
from nbgrader.api import MissingEntry
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from gradekit.authoring.release import copy_source
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.status import Status
from gradekit.grading import row_store
from gradekit.grading.gradebook import open_gradebook, read_grades
from gradekit.grading.gradebook_records import (
    CommentRecord,
    GradeRecord,
    NotebookRecord,
    SubmissionRecord,
    read_record,
)
from gradekit.grading.refresh import reapply_late_penalties
from gradekit.grading.row_store import RowStore
from gradekit.grading.submission_grader import GradedSubmission

pytestmark = pytest.mark.unit

DUE = datetime.datetime(2026, 12, 18, 23, 0)  # the gradebook keeps UTC without a zone
HANDED_IN = DUE + datetime.timedelta(days=8)  # the course's policy takes all of it from a week late on
NOTEBOOK = "090_decisions"
STUDENT = "ada"


def late_course(course, folder):
    """A course whose gradebook holds ada's late submission: a TA scored her written answer 2.5 of 3."""
    scratch = dataclasses.replace(copy_source(course, folder, ()), grader_attempts=2, retry_backoff_seconds=0.01)
    with open_gradebook(scratch) as gradebook:
        gradebook.add_assignment(scratch.assignment_id, duedate=DUE)
        gradebook.add_notebook(NOTEBOOK, scratch.assignment_id)
        gradebook.add_grade_cell("answer", NOTEBOOK, scratch.assignment_id, max_score=3, cell_type="markdown")
        gradebook.add_solution_cell("answer", NOTEBOOK, scratch.assignment_id)
        gradebook.add_grade_cell("test_f", NOTEBOOK, scratch.assignment_id, max_score=2, cell_type="code")
        gradebook.add_student(STUDENT)
        gradebook.add_submission(scratch.assignment_id, STUDENT, timestamp=HANDED_IN)
        gradebook.find_grade("answer", NOTEBOOK, scratch.assignment_id, STUDENT).manual_score = 2.5
        gradebook.db.commit()
    return scratch


def worker_row(student: str = STUDENT) -> GradedSubmission:
    """What a worker hands back: full marks on the test, the answer waiting, no penalty (it never saw the TA's score)."""
    grades = (GradeRecord("answer", None, None, None, True), GradeRecord("test_f", 2.0, None, None, False))
    notebook = NotebookRecord(NOTEBOOK, False, 0.0, grades, (CommentRecord("answer", None, None),))
    graded = nbformat.writes(nbformat.v4.new_notebook()).encode()
    return GradedSubmission(
        student_id=student,
        status=Status.GRADED,
        message="",
        record=SubmissionRecord(student, HANDED_IN, (notebook,)),
        files=((f"{NOTEBOOK}.ipynb", graded),),
        seconds=1.0,
    )


def stored_with_nbgraders_lookups(course, record: SubmissionRecord) -> None:
    """The record written as nbgrader's autograde writes it: each row found by its own query (the independent way)."""
    assignment, student = course.assignment_id, record.student_id
    with open_gradebook(course) as gradebook:
        gradebook.update_or_create_student(student)
        gradebook.update_or_create_submission(assignment, student, timestamp=record.timestamp)
        for notebook in record.notebooks:
            held = gradebook.find_submission_notebook(notebook.name, assignment, student)
            held.flagged, held.late_submission_penalty = notebook.flagged, notebook.late_submission_penalty
            for entry in notebook.grades:
                grade = gradebook.find_grade(entry.cell, notebook.name, assignment, student)
                grade.auto_score, grade.needs_manual_grade = entry.auto_score, entry.needs_manual_grade
            for comment in notebook.comments:
                gradebook.find_comment(
                    comment.cell, notebook.name, assignment, student
                ).auto_comment = comment.auto_comment
        gradebook.db.commit()


def test_a_row_is_stored_as_storing_repricing_and_reading_one_by_one_would_and_in_one_commit(course, tmp_path):
    ours, theirs = late_course(course, tmp_path / "ours"), late_course(course, tmp_path / "theirs")
    row = worker_row()
    with RowStore(ours) as store:
        store.store_and_read_back(row)  # the submission is there now: the second time writes only
        commits = []
        event.listen(store.gradebook.engine, "commit", lambda connection: commits.append(connection))
        grades = store.store_and_read_back(row)
    assert len(commits) == 1
    stored_with_nbgraders_lookups(theirs, row.record)
    reapply_late_penalties(theirs, [STUDENT])
    theirs.autograded_dir.joinpath(STUDENT, theirs.assignment_id).mkdir(parents=True)
    theirs.autograded_dir.joinpath(STUDENT, theirs.assignment_id, f"{NOTEBOOK}.ipynb").write_bytes(row.files[0][1])
    assert read_record(ours, STUDENT) == read_record(theirs, STUDENT)
    assert grades == read_grades(theirs, STUDENT) == read_grades(ours, STUDENT)
    assert grades.late_penalty == 4.5 and grades.written[0].score == 2.5  # the TA's score kept and priced in


def test_a_new_student_is_added_with_a_submission_to_fill(course, tmp_path):
    scratch = late_course(course, tmp_path / "course")
    with RowStore(scratch) as store:
        grades = store.store_and_read_back(worker_row("bo"))
    assert [(cell.cell, cell.score) for cell in grades.cells] == [("test_f", 2.0)]
    assert grades.written[0].score is None  # no TA has scored bo's answer yet
    with open_gradebook(scratch) as gradebook:
        assert gradebook.find_student("bo").last_name == "bo"


def test_the_store_holds_no_lock_between_rows(course, tmp_path):
    scratch = late_course(course, tmp_path / "course")
    with RowStore(scratch) as store:
        store.store_and_read_back(worker_row())
        other = sqlite3.connect(scratch.db_url.removeprefix("sqlite:///"), timeout=0)
        other.execute("BEGIN IMMEDIATE")  # a formgrader's write: it would fail at once on a held lock
        other.execute("UPDATE grade SET manual_score = 1.0 WHERE manual_score = 2.5")
        other.commit()
        other.close()
        assert store.store_and_read_back(worker_row()).written[0].score == 1.0  # and the next row sees it


def _busy(*args, **kwargs):
    raise OperationalError("UPDATE", {}, Exception("database is locked"))


def test_a_busy_gradebook_is_tried_again(course, tmp_path, monkeypatch):
    scratch = late_course(course, tmp_path / "course")
    tries = []

    def busy_once(*args, **kwargs):
        tries.append(args)
        if len(tries) == 1:
            _busy()
        return put_record(*args, **kwargs)

    put_record = row_store.put_record
    monkeypatch.setattr(row_store, "put_record", busy_once)
    with RowStore(scratch) as store:
        assert store.store_and_read_back(worker_row()).late_penalty == 4.5
    assert len(tries) == 2


def _failing_once(error):
    """`put_record` that raises `error` the first time, then stores; with the tries it was called for."""
    tries, put_record = [], row_store.put_record

    def put(*args, **kwargs):
        tries.append(args)
        if len(tries) == 1:
            raise error
        return put_record(*args, **kwargs)

    return put, tries


def test_a_server_connection_dropped_between_rows_is_tried_again_on_a_new_one(course, tmp_path, monkeypatch):
    scratch = late_course(course, tmp_path / "course")
    dropped = OperationalError("SELECT", {}, Exception("server closed the connection"), connection_invalidated=True)
    put, tries = _failing_once(dropped)
    monkeypatch.setattr(row_store, "put_record", put)
    with RowStore(scratch) as store:
        assert store.store_and_read_back(worker_row()).late_penalty == 4.5
    assert len(tries) == 2


def test_another_operational_error_is_not_tried_again(course, tmp_path, monkeypatch):
    scratch = late_course(course, tmp_path / "course")
    put, tries = _failing_once(OperationalError("UPDATE", {}, Exception("disk I/O error")))
    monkeypatch.setattr(row_store, "put_record", put)
    with RowStore(scratch) as store, pytest.raises(OperationalError, match="disk I/O error"):
        store.store_and_read_back(worker_row())
    assert len(tries) == 1


def test_a_gradebook_that_stays_busy_is_the_graders_failure_and_nothing_is_stored(course, tmp_path, monkeypatch):
    scratch = late_course(course, tmp_path / "course")
    before = read_record(scratch, STUDENT)
    monkeypatch.setattr(row_store, "put_record", _busy)
    with RowStore(scratch) as store, pytest.raises(GraderFailure) as failure:
        store.store_and_read_back(worker_row())
    assert failure.value.cause is GraderCause.GRADEBOOK_BUSY
    assert read_record(scratch, STUDENT) == before
    assert not (scratch.autograded_dir / STUDENT).exists()


def test_a_record_of_a_notebook_the_gradebook_lacks_is_refused_and_nothing_is_stored(course, tmp_path):
    scratch = late_course(course, tmp_path / "course")
    before = read_record(scratch, STUDENT)
    row = worker_row()
    stray = dataclasses.replace(row.record.notebooks[0], name="999_unknown")
    with RowStore(scratch) as store, pytest.raises(MissingEntry):
        store.store_and_read_back(dataclasses.replace(row, record=dataclasses.replace(row.record, notebooks=(stray,))))
    assert read_record(scratch, STUDENT) == before
