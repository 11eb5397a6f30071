"""Scores read from nbgrader's gradebook: one total per assignment and, when asked, one score per graded cell."""

from __future__ import annotations

import dataclasses

from nbgrader.api import Gradebook, MissingEntry


@dataclasses.dataclass(frozen=True)
class GradeItem:
    """One column of grades: an assignment's total or one graded cell of it."""

    assignment: str
    notebook: str = ""
    cell: str = ""
    max_score: float = 0.0

    @property
    def is_total(self) -> bool:
        return not self.cell

    @property
    def title(self) -> str:
        return self.assignment if self.is_total else f"{self.assignment}: {self.notebook}/{self.cell}"


@dataclasses.dataclass(frozen=True)
class ScoreTable:
    items: tuple[GradeItem, ...]
    scores: dict[str, tuple[float, ...]]  # nbgrader student id -> one score per item


def read_scores(gradebook: Gradebook, assignments: list[str], per_exercise: bool) -> ScoreTable:
    """Every gradebook student's scores; an assignment a student did not submit scores 0, as in nbgrader's own CSV."""
    chosen = [a for a in gradebook.assignments if not assignments or a.name in assignments]
    items = tuple(item for assignment in chosen for item in _items(assignment, per_exercise))
    scores = {student.id: _student_scores(gradebook, student.id, items) for student in gradebook.students}
    return ScoreTable(items, scores)


def _items(assignment, per_exercise: bool) -> list[GradeItem]:
    items = [GradeItem(assignment.name, max_score=assignment.max_score)]
    if per_exercise:
        for notebook in assignment.notebooks:
            for cell in notebook.grade_cells:
                if cell.max_score > 0:
                    items.append(GradeItem(assignment.name, notebook.name, cell.name, cell.max_score))
    return items


def _student_scores(gradebook: Gradebook, student: str, items: tuple[GradeItem, ...]) -> tuple[float, ...]:
    return tuple(_score(gradebook, student, item) for item in items)


def _score(gradebook: Gradebook, student: str, item: GradeItem) -> float:
    try:
        if item.is_total:
            submission = gradebook.find_submission(item.assignment, student)
            return max(0.0, submission.score - submission.late_submission_penalty)
        return gradebook.find_grade(item.cell, item.notebook, item.assignment, student).score
    except MissingEntry:
        return 0.0


def score_cells(table: ScoreTable, student: str) -> list[str]:
    """The student's scores as CSV cells; blank for a student the gradebook does not know (the LMS then keeps its grade)."""
    scores = table.scores.get(student)
    if scores is None:
        return [""] * len(table.items)
    return [format_score(score) for score in scores]


def format_score(score: float) -> str:
    return f"{score:.2f}".rstrip("0").rstrip(".")
