"""What `nbgrader autograde` writes to a gradebook for one submission, as plain values.

A worker grades in a private course directory; its records are copied into the
course's own gradebook afterwards, so the gradebook ends up exactly as a serial
`nbgrader autograde` leaves it, whatever order or machine the work ran on; one
addition: a student with no name gets one (`account_names`), for formgrader.
"""

from __future__ import annotations

import dataclasses
import datetime
import pwd
from collections.abc import Mapping

from nbgrader import utils
from nbgrader.api import BaseCell, Comment, Grade, Gradebook, MissingEntry, SubmittedNotebook

from gradekit.core.course import Course
from gradekit.grading.gradebook import open_gradebook


@dataclasses.dataclass(frozen=True)
class GradeRecord:
    cell: str
    auto_score: float | None
    manual_score: float | None
    extra_credit: float | None
    needs_manual_grade: bool


@dataclasses.dataclass(frozen=True)
class CommentRecord:
    cell: str
    auto_comment: str | None
    manual_comment: str | None


@dataclasses.dataclass(frozen=True)
class NotebookRecord:
    name: str
    flagged: bool
    late_submission_penalty: float | None
    grades: tuple[GradeRecord, ...]
    comments: tuple[CommentRecord, ...]


@dataclasses.dataclass(frozen=True)
class SubmissionRecord:
    student_id: str
    timestamp: datetime.datetime | None
    notebooks: tuple[NotebookRecord, ...]


def read_record(course: Course, student_id: str) -> SubmissionRecord:
    """The gradebook's entries for one student's submission of the course's assignment."""
    with open_gradebook(course) as gradebook:
        submission = gradebook.find_submission(course.assignment_id, student_id)
        notebooks = tuple(_notebook_record(n) for n in sorted(submission.notebooks, key=lambda n: n.name))
        return SubmissionRecord(student_id, submission.timestamp, notebooks)


def account_names(student_id: str) -> tuple[str, str]:
    """(first, last) name for formgrader, which shows "last, first" and otherwise "None, None".

    From the student's account on this machine (its full-name field, as on a hub)
    where there is one; else the id stands as the last name.
    """
    try:
        full = pwd.getpwnam(student_id).pw_gecos.split(",")[0].strip()
    except KeyError:
        full = ""
    if not full:
        return "", student_id
    first, _, last = full.rpartition(" ")
    return (first, last) if first else ("", last)


def _notebook_record(notebook: SubmittedNotebook) -> NotebookRecord:
    grades = tuple(
        GradeRecord(g.name, g.auto_score, g.manual_score, g.extra_credit, bool(g.needs_manual_grade))
        for g in sorted(notebook.grades, key=lambda g: g.name)
    )
    comments = tuple(
        CommentRecord(c.name, c.auto_comment, c.manual_comment) for c in sorted(notebook.comments, key=lambda c: c.name)
    )
    return NotebookRecord(notebook.name, bool(notebook.flagged), notebook.late_submission_penalty, grades, comments)


def write_record(course: Course, record: SubmissionRecord) -> None:
    """Store a submission's grades in the course gradebook, replacing what it held for that student."""
    with open_gradebook(course) as gradebook:
        put_record(gradebook, course.assignment_id, record)
        gradebook.db.commit()


def put_record(gradebook: Gradebook, assignment: str, record: SubmissionRecord) -> None:
    """`write_record` inside an open gradebook's transaction, left for the caller to commit.

    nbgrader commits when it adds a student or a submission the gradebook lacks
    (it builds the submission's empty grades and comments from the assignment's cells).
    """
    _put_student(gradebook, record.student_id)
    try:
        submission = gradebook.find_submission(assignment, record.student_id)
        submission.timestamp = utils.parse_utc(record.timestamp)
    except MissingEntry:
        submission = gradebook.add_submission(assignment, record.student_id, timestamp=record.timestamp)
    held = {notebook.name: notebook for notebook in submission.notebooks}
    rows = _rows_by_cell(gradebook, [notebook.id for notebook in held.values()])
    for notebook in record.notebooks:
        if notebook.name not in held:
            raise MissingEntry(f"No such submitted notebook: {assignment}/{notebook.name} for {record.student_id}")
        _put_notebook(held[notebook.name], notebook, rows)


def _put_student(gradebook: Gradebook, student_id: str) -> None:
    """The student, added with their account's names when new; names someone set are kept."""
    try:
        student = gradebook.find_student(student_id)
    except MissingEntry:
        first, last = account_names(student_id)
        gradebook.add_student(student_id, first_name=first, last_name=last)
        return
    if student.first_name is None and student.last_name is None:
        student.first_name, student.last_name = account_names(student_id)


CellRows = Mapping[tuple[type, str, str], Grade | Comment]  # (kind, notebook id, cell name) -> its row


def _rows_by_cell(gradebook: Gradebook, notebook_ids: list[str]) -> CellRows:
    """Every grade and comment of the submitted notebooks, in two queries rather than two per cell."""
    rows: dict[tuple[type, str, str], Grade | Comment] = {}
    for kind in (Grade, Comment):
        found = (
            gradebook.db.query(kind, BaseCell.name)
            .join(BaseCell, BaseCell.id == kind.cell_id)
            .filter(kind.notebook_id.in_(notebook_ids))
        )
        rows.update({(kind, row.notebook_id, name): row for row, name in found})
    return rows


def _put_notebook(notebook: SubmittedNotebook, record: NotebookRecord, rows: CellRows) -> None:
    notebook.flagged = record.flagged
    notebook.late_submission_penalty = record.late_submission_penalty
    entry: GradeRecord | CommentRecord
    for kind, entries in ((Grade, record.grades), (Comment, record.comments)):
        for entry in entries:
            key = (kind, notebook.id, entry.cell)
            if key not in rows:
                raise MissingEntry(f"No such {kind.__name__.lower()}: {record.name}/{entry.cell}")
            _copy_values(entry, rows[key])


MANUAL_FIELDS = ("manual_score", "manual_comment", "extra_credit")  # what a TA enters in formgrader


def _copy_values(record: GradeRecord | CommentRecord, row: Grade | Comment) -> None:
    """Set every field of the record but the cell name on the gradebook row it describes.

    A TA's score or comment the gradebook holds is kept where the record has none, as nbgrader's
    autograde keeps it: a worker grading against a fresh gradebook (any database but SQLite) never saw it.
    """
    for field in dataclasses.fields(record):
        value = getattr(record, field.name)
        if field.name != "cell" and not (field.name in MANUAL_FIELDS and value is None):
            setattr(row, field.name, value)
