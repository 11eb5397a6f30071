"""Scores of autograded cells as the gradebook holds them, joined with the misconceptions their feedback names."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class CellGrade:
    notebook: str
    cell: str
    score: float
    max_score: float
    diagnosed: tuple[str, ...] = ()
    said: str = ""  # a failed cell's own message (its error's value), for the course lead

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
