"""Scores as nbgrader's gradebook holds them, joined with the diagnoses from the graded notebooks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from nbformat import NotebookNode
from nbgrader.api import BaseCell, Grade, Gradebook, MissingEntry, Notebook, SubmittedNotebook
from sqlalchemy import select

from gradekit.core.course import Course
from gradekit.core.diagnoses import diagnoses_by_cell, failure_messages, read_graded
from gradekit.core.grades import CellGrade, SubmissionGrades, WrittenGrade
from gradekit.core.nbgrader_cli import with_tools_first
from gradekit.core.nbgrader_in_process import read_schema_here
from gradekit.grading.late_policy import LatePolicy


def open_gradebook(course: Course) -> Gradebook:
    """nbgrader's gradebook; a new one is stamped with the schema's version read here (nbgrader_in_process.py).

    This interpreter's bin/ still goes first on PATH, where nbgrader's own way finds `alembic` by name
    (a process of the kit's that creates a gradebook without coming through here).
    """
    read_schema_here()
    os.environ["PATH"] = with_tools_first(os.environ.get("PATH", ""))
    return Gradebook(course.db_url, course.course_id)


def read_grades(course: Course, student_id: str) -> SubmissionGrades:
    """The autograded test cells of one submission, with the misconceptions their output names."""
    with open_gradebook(course) as gradebook:
        return grades_in(gradebook, course, student_id)


def grades_in(gradebook: Gradebook, course: Course, student_id: str) -> SubmissionGrades:
    """`read_grades` from a gradebook already open."""
    try:
        submission = gradebook.find_submission(course.assignment_id, student_id)
    except MissingEntry:
        return SubmissionGrades(student_id, (), missing=True)
    penalties = _late_penalties(gradebook, submission.id)
    grades = _grade_rows(gradebook, submission.id)
    cells: list[CellGrade] = []
    written: list[WrittenGrade] = []
    unsubmitted = []
    for name in sorted(penalties):
        graded = _graded_copy(course, student_id, name)
        if not graded.exists():
            unsubmitted.append(name)
        autograded, marked = _cells_of(name, grades.get(name, []), read_graded(graded) if graded.exists() else None)
        cells += autograded
        written += marked
    seconds_late = float(submission.total_seconds_late)
    return SubmissionGrades(
        student_id,
        tuple(cells),
        unsubmitted=tuple(unsubmitted),
        written=tuple(written),
        seconds_late=seconds_late,
        late_penalty=float(sum(penalty or 0 for penalty in penalties.values())),
        past_cutoff=late_policy(course).past_cutoff(seconds_late),
    )


def _cells_of(
    notebook: str, grades: list[_GradeRow], graded: NotebookNode | None
) -> tuple[list[CellGrade], list[WrittenGrade]]:
    """A notebook's autograded cells, with what their outputs in the graded copy say, and its written answers."""
    diagnosed = diagnoses_by_cell(graded) if graded else {}
    said = failure_messages(graded) if graded else {}
    cells, written = [], []
    for grade in sorted(grades, key=lambda g: g.cell):
        if grade.cell_type != "code":
            if grade.max_score:  # a 0-point mark scheme is nobody's work
                written.append(_written(notebook, grade))
            continue  # manually graded answers are not part of autograding
        cells.append(
            CellGrade(
                notebook=notebook,
                cell=grade.cell,
                score=float(grade.score),
                max_score=float(grade.max_score),
                diagnosed=diagnosed.get(grade.cell, ()),
                said=said.get(grade.cell, "") if grade.score < grade.max_score else "",
            )
        )
    return cells, written


def _late_penalties(gradebook: Gradebook, submission_id: str) -> dict[str, float | None]:
    """The late penalty of each notebook of a submission, by notebook name."""
    query = (
        select(Notebook.name, SubmittedNotebook.late_submission_penalty)
        .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
        .where(SubmittedNotebook.assignment_id == submission_id)
    )
    return {name: penalty for name, penalty in gradebook.db.execute(query)}


class _GradeRow(NamedTuple):
    notebook: str
    cell: str
    cell_type: str | None
    score: float
    max_score: float
    needs_manual_grade: bool
    manual_score: float | None


def _grade_rows(gradebook: Gradebook, submission_id: str) -> dict[str, list[_GradeRow]]:
    """Every grade of a submission by notebook name, in one query (the ORM's own walk costs a few queries a cell)."""
    query = (
        select(
            Notebook.name,
            BaseCell.name,
            Grade.cell_type,
            Grade.score,
            Grade.max_score,
            Grade.needs_manual_grade,
            Grade.manual_score,
        )
        .select_from(Grade)
        .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
        .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
        .join(BaseCell, Grade.cell_id == BaseCell.id)
        .where(SubmittedNotebook.assignment_id == submission_id)
    )
    rows: dict[str, list[_GradeRow]] = {}
    for row in gradebook.db.execute(query):
        grade = _GradeRow(*row)
        rows.setdefault(grade.notebook, []).append(grade)
    return rows


def late_policy(course: Course) -> LatePolicy:
    """The course's late policy as `c.LatePolicy.*` states it."""
    return LatePolicy(config=course.nbgrader_config)


def _written(notebook: str, grade: _GradeRow) -> WrittenGrade:
    waiting = grade.needs_manual_grade and grade.manual_score is None
    blank = not grade.needs_manual_grade and grade.manual_score is None  # nbgrader's autograde found it unchanged
    return WrittenGrade(notebook, grade.cell, None if waiting else float(grade.score), float(grade.max_score), blank)


def _graded_copy(course: Course, student_id: str, notebook: str) -> Path:
    return course.autograded_dir / student_id / course.assignment_id / f"{notebook}.ipynb"
