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
from collections.abc import Iterable, Mapping
from typing import Any

from nbgrader import utils
from nbgrader.api import (
    Assignment,
    BaseCell,
    Comment,
    Grade,
    Gradebook,
    GradeCell,
    MissingEntry,
    Notebook,
    SolutionCell,
    SubmittedAssignment,
    SubmittedNotebook,
    TaskCell,
    new_uuid,
)
from sqlalchemy import Row, Select, insert, select
from sqlalchemy.orm import joinedload

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
    """The gradebook's entries for one student's submission of the course's assignment.

    Read as plain columns, three queries in all: loading nbgrader's objects would
    also compute every score and total they define, notebook by notebook and cell by cell.
    """
    with open_gradebook(course) as gradebook:
        db = gradebook.db
        found = db.execute(
            select(SubmittedAssignment.id, SubmittedAssignment.timestamp)
            .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
            .where(Assignment.name == course.assignment_id, SubmittedAssignment.student_id == student_id)
        ).one_or_none()
        if found is None:
            raise MissingEntry(f"No such submission: {course.assignment_id} for {student_id}")
        notebooks = db.execute(
            select(
                SubmittedNotebook.id,
                Notebook.name,
                SubmittedNotebook.flagged,
                SubmittedNotebook.late_submission_penalty,
            )
            .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
            .where(SubmittedNotebook.assignment_id == found.id)
        ).all()
        ids = [notebook.id for notebook in notebooks]
        grade_columns = (Grade.auto_score, Grade.manual_score, Grade.extra_credit, Grade.needs_manual_grade)
        grades = _by_notebook(db.execute(_cell_rows(Grade, ids, *grade_columns)))
        comments = _by_notebook(db.execute(_cell_rows(Comment, ids, Comment.auto_comment, Comment.manual_comment)))
        records = tuple(
            NotebookRecord(
                name=n.name,
                flagged=bool(n.flagged),
                late_submission_penalty=n.late_submission_penalty,
                grades=tuple(_grade_record(row) for row in grades.get(n.id, ())),
                comments=tuple(_comment_record(row) for row in comments.get(n.id, ())),
            )
            for n in sorted(notebooks, key=lambda n: n.name)
        )
        return SubmissionRecord(student_id=student_id, timestamp=found.timestamp, notebooks=records)


def _cell_rows(table: type[Grade] | type[Comment], notebook_ids: list[str], *columns: Any) -> Select:
    """(notebook_id, name, *columns) of each grade or comment of the given submitted notebooks; `name` is the cell's."""
    return (
        select(table.notebook_id, BaseCell.name, *columns)
        .join(BaseCell, BaseCell.id == table.cell_id)
        .where(table.notebook_id.in_(notebook_ids))
    )


def _by_notebook(rows: Iterable[Row]) -> dict[str, list[Row]]:
    """Each submitted notebook's rows, in order of the cell's name."""
    grouped: dict[str, list[Row]] = {}
    for row in sorted(rows, key=lambda row: (row.notebook_id, row.name)):
        grouped.setdefault(row.notebook_id, []).append(row)
    return grouped


def _grade_record(row: Row) -> GradeRecord:
    return GradeRecord(
        cell=row.name,
        auto_score=row.auto_score,
        manual_score=row.manual_score,
        extra_credit=row.extra_credit,
        needs_manual_grade=bool(row.needs_manual_grade),
    )


def _comment_record(row: Row) -> CommentRecord:
    return CommentRecord(cell=row.name, auto_comment=row.auto_comment, manual_comment=row.manual_comment)


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


def write_record(course: Course, record: SubmissionRecord) -> None:
    """Store a submission's grades in the course gradebook, replacing what it held for that student."""
    with open_gradebook(course) as gradebook:
        put_record(gradebook, course.assignment_id, record)
        gradebook.db.commit()


def put_record(gradebook: Gradebook, assignment: str, record: SubmissionRecord) -> None:
    """`write_record` inside an open gradebook's transaction, left for the caller to commit.

    nbgrader commits when it adds a student the gradebook lacks; a new submission is built here
    (`add_submission`) and committed with its grades.
    """
    _put_student(gradebook, record.student_id)
    try:
        submission = gradebook.find_submission(assignment, record.student_id)
        submission.timestamp = utils.parse_utc(record.timestamp)
    except MissingEntry:
        submission = add_submission(gradebook, assignment, record.student_id, record.timestamp)
    held = {notebook.name: notebook for notebook in _submitted_notebooks(gradebook, submission)}
    rows = _rows_by_cell(gradebook, [notebook.id for notebook in held.values()])
    for notebook in record.notebooks:
        if notebook.name not in held:
            raise MissingEntry(f"No such submitted notebook: {assignment}/{notebook.name} for {record.student_id}")
        _put_notebook(held[notebook.name], notebook, rows)


def add_submission(
    gradebook: Gradebook, assignment: str, student_id: str, timestamp: datetime.datetime | None
) -> SubmittedAssignment:
    """nbgrader's `Gradebook.add_submission` in a few statements, left for the caller to commit.

    The same rows: a submitted notebook per notebook of the assignment, an empty grade per grade
    or task cell and an empty comment per solution or task cell. nbgrader's own walks the
    assignment cell by cell through the ORM, tens of queries, and commits on its own.
    """
    session = gradebook.db
    submission = SubmittedAssignment(
        assignment=gradebook.find_assignment(assignment),
        student=gradebook.find_student(student_id),
        timestamp=utils.parse_utc(timestamp) if timestamp is not None else None,
    )
    session.add(submission)
    session.flush()
    notebooks = {
        notebook_id: new_uuid()
        for notebook_id in session.scalars(
            select(Notebook.id).where(Notebook.assignment_id == submission.assignment_id)
        )
    }
    if notebooks:
        session.execute(
            insert(SubmittedNotebook),
            [{"id": own, "assignment_id": submission.id, "notebook_id": of} for of, own in notebooks.items()],
        )
    for kind, cells in ((Grade, (GradeCell, TaskCell)), (Comment, (SolutionCell, TaskCell))):
        rows = [
            {"id": new_uuid(), "cell_id": cell_id, "notebook_id": notebooks[notebook_id]}
            for cell in cells
            for cell_id, notebook_id in session.execute(
                select(cell.id, cell.notebook_id).where(cell.notebook_id.in_(notebooks))
            )
        ]
        if rows:
            session.execute(insert(kind), rows)
    session.expire(submission, ["notebooks"])  # read back: the rows above went around the ORM's collection
    return submission


def _submitted_notebooks(gradebook: Gradebook, submission: SubmittedAssignment) -> list[SubmittedNotebook]:
    """A submission's notebooks with their names loaded in the same query (a name is its notebook's)."""
    query = (
        select(SubmittedNotebook)
        .options(joinedload(SubmittedNotebook.notebook))
        .where(SubmittedNotebook.assignment_id == submission.id)
    )
    return list(gradebook.db.scalars(query))


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
