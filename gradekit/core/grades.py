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
class WrittenGrade:
    """A free-response answer a TA grades in formgrader; its score is None while it waits for them."""

    notebook: str
    cell: str
    score: float | None
    max_score: float
    blank: bool = False  # handed in as the release left it: nbgrader scores it 0 and no TA is asked

    @property
    def waiting(self) -> bool:
        return self.score is None


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
    written: tuple[WrittenGrade, ...] = ()  # the answers a TA grades, apart from the autograded cells
    seconds_late: float = 0.0  # how long after the due date (the gradebook's, with any extension) it was handed in
    late_penalty: float = 0.0  # points the late policy took, over all notebooks (nbgrader's late_submission_penalty)
    past_cutoff: bool = False  # handed in after the late policy's hard cut-off: it scores 0 and a TA is told

    @property
    def after_penalty(self) -> float:
        """The submission's points, autograded and written, less the late penalty, as nbgrader's export counts them."""
        return max(0.0, self.score + self.written_score - self.late_penalty)

    @property
    def late_summary(self) -> str:
        """How the late policy touched it, for tables: "-", "-1.5", or "0: past the cut-off"."""
        if self.past_cutoff:
            return "0: past the cut-off"
        return f"-{self.late_penalty:g}" if self.late_penalty else "-"

    @property
    def written_score(self) -> float:
        return sum(w.score or 0 for w in self.written)

    @property
    def written_max(self) -> float:
        return sum(w.max_score for w in self.written)

    @property
    def waiting(self) -> tuple[WrittenGrade, ...]:
        """The written answers no TA has graded yet."""
        return tuple(w for w in self.written if w.waiting)

    @property
    def written_summary(self) -> str:
        """How the written answers stand, for tables: "4/5", "0/5 (2 waiting for a TA)", or "-"."""
        if not self.written:
            return "-"
        shown = f"{self.written_score:g}/{self.written_max:g}"
        return f"{shown} ({len(self.waiting)} waiting for a TA)" if self.waiting else shown

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
