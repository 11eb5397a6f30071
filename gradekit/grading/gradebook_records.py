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

from nbgrader.api import Comment, Grade, Gradebook, SubmittedNotebook

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
        student = gradebook.update_or_create_student(record.student_id)
        if student.first_name is None and student.last_name is None:  # names someone set are kept
            first, last = account_names(record.student_id)
            gradebook.update_or_create_student(record.student_id, first_name=first, last_name=last)
        submission = gradebook.update_or_create_submission(
            course.assignment_id, record.student_id, timestamp=record.timestamp
        )
        for notebook in record.notebooks:
            _write_notebook(gradebook, course.assignment_id, record.student_id, notebook)
        gradebook.db.commit()
        del submission


def _write_notebook(gradebook: Gradebook, assignment: str, student: str, record: NotebookRecord) -> None:
    notebook = gradebook.find_submission_notebook(record.name, assignment, student)
    notebook.flagged = record.flagged
    notebook.late_submission_penalty = record.late_submission_penalty
    entry: GradeRecord | CommentRecord
    for entry in record.grades:
        _copy_values(entry, gradebook.find_grade(entry.cell, record.name, assignment, student))
    for entry in record.comments:
        _copy_values(entry, gradebook.find_comment(entry.cell, record.name, assignment, student))


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
