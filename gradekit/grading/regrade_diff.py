"""What a regrade changed: whose score moved, from what to what, in which cells, and the new diagnosis.

The grades before are read from the gradebook before the run starts (`grades_before`); the rows the
run grades are compared with them (`regrade_diff`). A student whose score did not move is counted,
not listed. Written answers are the TA's: nbgrader keeps a score entered in formgrader when it
autogrades again, and the diff says how many points it kept, so a TA sees their work survived.
A cohort the gradebook held no grades of is a first grading: there is nothing to compare.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path
from typing import Iterable, Mapping

from nbgrader.api import MissingEntry

from gradekit.core.atomic_files import atomic_write
from gradekit.core.course import Course
from gradekit.core.grades import CellGrade, SubmissionGrades
from gradekit.core.outcome import Outcome
from gradekit.grading.gradebook_copy import sqlite_file
from gradekit.grading.refresh import gradebook_rows

REGRADE_FILE = "regrade.csv"
CSV_COLUMNS = ("student_id", "before", "after", "cells_changed", "diagnosis", "written_points_kept")


@dataclasses.dataclass(frozen=True)
class CellChange:
    notebook: str
    cell: str
    before: float | None  # None: the cell had no score before (a notebook handed in since)
    after: float
    max_score: float
    diagnosis: str  # what the cell's feedback says now: the misconceptions named, its message, or that it passes

    @property
    def text(self) -> str:
        before = "-" if self.before is None else f"{self.before:g}"
        return f"{self.notebook}/{self.cell}: {before} -> {self.after:g} of {self.max_score:g}"


@dataclasses.dataclass(frozen=True)
class StudentChange:
    student_id: str
    before: float  # the submission's points less the late penalty, as grades.csv counts them
    after: float
    cells: tuple[CellChange, ...]
    written_kept: float  # points of written answers a TA graded, the same after the regrade
    written_kept_answers: int

    @property
    def diagnosis(self) -> str:
        return "; ".join(f"{c.notebook}/{c.cell}: {c.diagnosis}" for c in self.cells)

    @property
    def written_line(self) -> str:
        if not self.written_kept_answers:
            return "no written answers graded by a TA"
        return f"written answers kept: {self.written_kept:g} points entered by a TA"

    @property
    def line(self) -> str:
        cells = ", ".join(c.text for c in self.cells) or "no autograded cell changed"
        return f"{self.student_id}: {self.before:g} -> {self.after:g} ({cells}); now: {self.diagnosis or '-'}; " + (
            self.written_line
        )


@dataclasses.dataclass(frozen=True)
class RegradeDiff:
    changed: tuple[StudentChange, ...]  # by student id
    unchanged: int
    first_grading: bool = False
    written_kept: float = 0.0  # over every regraded student, changed or not
    written_kept_answers: int = 0

    @property
    def headline(self) -> str:
        if self.first_grading:
            return "first grading: no earlier grades to compare"
        kept = (
            f"written answers kept: {self.written_kept:g} points entered by a TA ({self.written_kept_answers} answers)"
        )
        return f"regrade: {len(self.changed)} student(s) changed score, {self.unchanged} unchanged; {kept}"

    def lines(self) -> list[str]:
        """The headline, then one line per changed student."""
        return [self.headline, *(f"  {change.line}" for change in self.changed)]


def grades_before(course: Course) -> dict[str, SubmissionGrades]:
    """The grades the gradebook holds for every graded student, by id; none before the first grading."""
    course_file = sqlite_file(course.db_url)
    if course_file is not None and not course_file.is_file():
        return {}  # reading would create an empty gradebook
    try:
        rows = gradebook_rows(course)
    except MissingEntry:  # the gradebook does not know the assignment yet
        return {}
    return {row.student_id: row.grades for row in rows if row.grades}


def regrade_diff(before: Mapping[str, SubmissionGrades], rows: Iterable[Outcome]) -> RegradeDiff:
    """Every regraded row with grades compared with its student's grades `before`, by student id."""
    regraded = sorted((row for row in rows if row.grades), key=lambda row: row.student_id)
    if not before:
        return RegradeDiff((), len(regraded), first_grading=True)
    changes = [student_change(before.get(row.student_id), row.grades) for row in regraded if row.grades]
    changed = tuple(c for c in changes if c.cells or c.before != c.after)
    return RegradeDiff(
        changed,
        len(changes) - len(changed),
        written_kept=sum(c.written_kept for c in changes),
        written_kept_answers=sum(c.written_kept_answers for c in changes),
    )


def student_change(before: SubmissionGrades | None, after: SubmissionGrades) -> StudentChange:
    """How one student's grades moved; a student with no grades before starts from nothing."""
    cells = tuple(
        cell_change(before.cell(cell.notebook, cell.cell) if before else None, cell)
        for cell in after.cells
        if not before or _moved(before.cell(cell.notebook, cell.cell), cell)
    )
    kept = _written_kept(before, after)
    return StudentChange(
        after.student_id,
        before.after_penalty if before else 0.0,
        after.after_penalty,
        cells,
        sum(w.score or 0 for w in kept),
        len(kept),
    )


def _moved(before: CellGrade | None, after: CellGrade) -> bool:
    return before is None or before.score != after.score


def _written_kept(before: SubmissionGrades | None, after: SubmissionGrades) -> list:
    """The written answers a TA had graded whose score the regrade left as it was (a blank one no TA saw)."""
    earlier = {(w.notebook, w.cell): w.score for w in before.written} if before else {}
    return [
        w for w in after.written if w.score is not None and not w.blank and earlier.get((w.notebook, w.cell)) == w.score
    ]


def cell_change(before: CellGrade | None, after: CellGrade) -> CellChange:
    if after.diagnosed:
        diagnosis = ", ".join(after.diagnosed)
    else:
        diagnosis = "full marks" if after.full else (after.said or "fails, with no misconception named")
    return CellChange(
        after.notebook, after.cell, before.score if before else None, after.score, after.max_score, diagnosis
    )


def write_regrade_csv(folder: Path, diff: RegradeDiff) -> Path | None:
    """`folder`/regrade.csv: one row per changed student; a first grading removes an earlier run's file."""
    target = Path(folder) / REGRADE_FILE
    if diff.first_grading:
        target.unlink(missing_ok=True)
        return None
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for change in diff.changed:
        cells = "; ".join(c.text for c in change.cells)
        before, after, kept = (f"{value:g}" for value in (change.before, change.after, change.written_kept))
        writer.writerow([change.student_id, before, after, cells, change.diagnosis, kept])
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, buffer.getvalue().encode())
    return target
