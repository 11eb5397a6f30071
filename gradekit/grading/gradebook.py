"""Scores as nbgrader's gradebook holds them, joined with the diagnoses from the graded notebooks."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from gradekit.course import Course
from gradekit.nbgrader_cli import with_tools_first
from gradekit.report.diagnoses import diagnoses_by_cell


@dataclasses.dataclass(frozen=True)
class CellGrade:
    notebook: str
    cell: str
    score: float
    max_score: float
    diagnosed: tuple[str, ...] = ()

    @property
    def full(self) -> bool:
        return self.score >= self.max_score

    @property
    def zero(self) -> bool:
        return self.score == 0


@dataclasses.dataclass(frozen=True)
class SubmissionGrades:
    """The autograded cells of one student's submission; missing when nbgrader has no record of it.

    `unsubmitted` names the notebooks nbgrader scored zero without a graded copy:
    left out, unreadable or refused at intake. Their cells say nothing about the exercises.
    """

    student_id: str
    cells: tuple[CellGrade, ...]
    missing: bool = False
    unsubmitted: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        return sum(c.score for c in self.cells)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.cells)

    def cell(self, notebook: str, cell: str) -> CellGrade | None:
        for grade in self.cells:
            if grade.notebook == notebook and grade.cell == cell:
                return grade
        return None

    def submitted(self, notebook: str) -> bool:
        return not self.missing and notebook not in self.unsubmitted

    def of_notebook(self, notebook: str) -> tuple[CellGrade, ...]:
        return tuple(c for c in self.cells if c.notebook == notebook)

    @property
    def diagnosed(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for c in self.cells for m in c.diagnosed))


def open_gradebook(course: Course) -> Gradebook:
    """nbgrader's gradebook; it may run `alembic` by name, so this interpreter's bin/ must be on PATH."""
    os.environ["PATH"] = with_tools_first(os.environ.get("PATH", ""))
    return Gradebook(course.db_url, course.course_id)


def read_grades(course: Course, student_id: str) -> SubmissionGrades:
    """The autograded test cells of one submission, with the misconceptions their output names."""
    with open_gradebook(course) as gradebook:
        try:
            submission = gradebook.find_submission(course.assignment_id, student_id)
        except MissingEntry:
            return SubmissionGrades(student_id, (), missing=True)
        cells, unsubmitted = [], []
        for notebook in sorted(submission.notebooks, key=lambda n: n.name):
            graded = _graded_copy(course, student_id, notebook.name)
            if not graded.exists():
                unsubmitted.append(notebook.name)
            diagnosed = diagnoses_by_cell(graded) if graded.exists() else {}
            for grade in sorted(notebook.grades, key=lambda g: g.name):
                if grade.cell.cell_type != "code":
                    continue  # manually graded answers are not part of autograding
                cells.append(
                    CellGrade(
                        notebook=notebook.name,
                        cell=grade.name,
                        score=float(grade.score),
                        max_score=float(grade.max_score),
                        diagnosed=diagnosed.get(grade.name, ()),
                    )
                )
        return SubmissionGrades(student_id, tuple(cells), unsubmitted=tuple(unsubmitted))


def _graded_copy(course: Course, student_id: str, notebook: str) -> Path:
    return course.autograded_dir / student_id / course.assignment_id / f"{notebook}.ipynb"
