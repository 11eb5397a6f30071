"""The figures of the class report, computed once for the page and the CSV files alike."""

from __future__ import annotations

import dataclasses
import datetime
import os
import statistics
from pathlib import Path

from gradekit.core.catalog import Misconception
from gradekit.core.extensions import Extension
from gradekit.core.manifest import Manifest
from gradekit.core.notes import NoteKind
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status
from gradekit.grading.regrade_diff import RegradeDiff
from gradekit.report.item_statistics import (
    MIN_SUBMITTERS,
    ItemStats,
    WrittenStats,
    cell_stats,
    exercise_stats,
    written_stats,
)
from gradekit.report.note_kinds import NoteGroup, note_groups

SIMILARITY_PAGE = "similarity.html"
LOWEST_SCORES = (
    5  # at most; and never more than a quarter of the class (at least one), so a small class is not half "lowest"
)


@dataclasses.dataclass(frozen=True)
class MisconceptionStats:
    id: str
    title: str
    diagnosis: str
    students: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.students)


@dataclasses.dataclass(frozen=True)
class FeedbackLinks:
    """Where each student's feedback pages are, as links relative to the report folder.

    nbgrader lays feedback out as <feedback>/<student>/<assignment>/<notebook>.html;
    only pages that exist are linked.
    """

    feedback_dir: Path | None
    assignment_id: str
    report_dir: Path

    def pages(self, student: str) -> tuple[tuple[str, str], ...]:
        """(notebook, relative link) of every feedback page of the student, by notebook."""
        if self.feedback_dir is None:
            return ()
        folder = self.feedback_dir / student / self.assignment_id
        found = sorted(folder.glob("*.html")) if folder.is_dir() else []
        return tuple((page.stem, Path(os.path.relpath(page, self.report_dir)).as_posix()) for page in found)

    def first(self, student: str) -> str:
        pages = self.pages(student)
        return pages[0][1] if pages else ""


@dataclasses.dataclass(frozen=True)
class TermFacts:
    """The assignment's due date, the late policy in words and the extensions granted, as the report lists them."""

    due: datetime.datetime | None = None
    late_policy: str = ""
    extensions: tuple[Extension, ...] = ()


@dataclasses.dataclass(frozen=True)
class ClassReport:
    """Everything the page and the CSV files show."""

    rows: tuple[Outcome, ...]
    max_points: float
    notebooks: tuple[str, ...]
    exercises: tuple[ItemStats, ...]
    cells: tuple[ItemStats, ...]
    misconceptions: tuple[MisconceptionStats, ...]
    notes: tuple[NoteGroup, ...]
    feedback: FeedbackLinks
    similarity_page: str = ""  # link to the similarity report, when one was written
    written: tuple[WrittenStats, ...] = ()  # the answers a TA grades, with how far their grading is
    term: TermFacts = dataclasses.field(default_factory=lambda: TermFacts())
    regrade: RegradeDiff | None = None  # whose score this run changed; None when the report was refreshed only

    def extension_of(self, student: str) -> Extension | None:
        return next((e for e in self.term.extensions if e.student_id == student), None)

    def with_status(self, status: Status) -> tuple[Outcome, ...]:
        return tuple(r for r in self.rows if r.status is status)

    @property
    def counted(self) -> tuple[Outcome, ...]:
        """The rows whose scores count in the class's figures."""
        return tuple(r for r in self.rows if r.status.counts_as_submitted)

    @property
    def waiting_for_ta(self) -> tuple[Outcome, ...]:
        """The rows with a written answer no TA has graded yet (formgrader lists them)."""
        return tuple(r for r in self.rows if r.grades and r.grades.waiting)

    @property
    def waiting_points(self) -> float:
        """The points of the written answers no TA has graded yet."""
        return sum(w.max_score for r in self.waiting_for_ta if r.grades for w in r.grades.waiting)

    @property
    def median_score(self) -> float | None:
        graded = [r.score for r in self.counted]
        return statistics.median(graded) if graded else None

    @property
    def score_percentages(self) -> tuple[float, ...]:
        return tuple(r.score / self.max_points * 100 for r in self.counted) if self.max_points else ()


def misconception_stats(rows: tuple[Outcome, ...], catalog: dict[str, Misconception]) -> tuple[MisconceptionStats, ...]:
    """Each diagnosed misconception with the students who showed it, most frequent first."""
    students: dict[str, list[str]] = {}
    for row in rows:
        for misconception in row.grades.diagnosed if row.grades else ():
            students.setdefault(misconception, []).append(row.student_id)
    stats = [
        MisconceptionStats(
            id=m,
            title=catalog[m].title if m in catalog else m,
            diagnosis=catalog[m].diagnosis if m in catalog else "",
            students=tuple(sorted(names)),
        )
        for m, names in students.items()
    ]
    return tuple(sorted(stats, key=lambda s: (-s.count, s.id)))


def class_report(
    folder: Path,
    manifest: Manifest,
    rows: tuple[Outcome, ...],
    catalog: dict[str, Misconception],
    feedback_dir: Path | None = None,
    assignment_id: str = "",
    minimum: int = MIN_SUBMITTERS,
    term: TermFacts | None = None,
    regrade: RegradeDiff | None = None,
) -> ClassReport:
    notebooks = tuple(entry.name for entry in manifest.notebooks)
    return ClassReport(
        rows=rows,
        max_points=sum(manifest.points_of(name) for name in notebooks),
        notebooks=notebooks,
        exercises=exercise_stats(manifest, rows, minimum),
        cells=cell_stats(manifest, rows, minimum),
        misconceptions=misconception_stats(rows, catalog),
        notes=note_groups(rows),
        feedback=FeedbackLinks(feedback_dir, assignment_id or manifest.assignment, folder),
        similarity_page=SIMILARITY_PAGE if (folder / SIMILARITY_PAGE).is_file() else "",
        written=written_stats(manifest, rows),
        term=term or TermFacts(),
        regrade=regrade,
    )


def reasons_to_reach_out(report: ClassReport) -> tuple[tuple[Outcome, tuple[str, ...]], ...]:
    """Students a TA should contact and why: failed, flagged, the lowest scores, left-out notebooks."""
    graded = sorted(report.counted, key=lambda r: (r.score, r.student_id))
    median = report.median_score
    shown = lowest_shown(len(graded))
    lowest = {r.student_id for r in graded[:shown] if median is not None and r.score < median}
    found = []
    for row in report.rows:
        reasons = []
        if row.status.needs_ta:
            reasons.append(f"{row.status.reason}: " + ("; ".join(f.text for f in row.findings) or row.message))
        if row.cause:  # the grader's own failure: say so, so that nobody reads it as the student's
            reasons.append(f"the grader's failure, not the student's: {row.cause.value}")
        if row.student_id in lowest:
            reasons.append("the lowest score" if shown == 1 else f"among the {shown} lowest scores")
        reasons.extend(late_reasons(report, row))
        left_out = row.grades.unsubmitted if row.grades else ()
        unreadable = [note for note in row.notes if note.kind is NoteKind.UNREADABLE and note.notebook in left_out]
        reasons.extend(
            f"handed in {note.notebook}.ipynb, which is not a readable notebook (it scores 0)" for note in unreadable
        )
        others = len(left_out) - len(unreadable)
        if others:
            reasons.append(f"left out {others} of {len(report.notebooks)} notebooks")
        if reasons:
            found.append((row, tuple(reasons)))
    return tuple(
        sorted(found, key=lambda pair: (pair[0].status.urgency, pair[0].student_id not in lowest, pair[0].score))
    )


def late_reasons(report: ClassReport, row: Outcome) -> list[str]:
    """How late the row was, after which deadline, what the policy took, and whether it passed the cut-off."""
    grades = row.grades
    if not grades or not grades.seconds_late:
        return []
    extension = report.extension_of(row.student_id)
    deadline = f"their extension to {extension.until:%Y-%m-%d %H:%M %Z}" if extension else "the due date"
    said = f"handed in {late_by(grades.seconds_late)} after {deadline}"
    if grades.past_cutoff:
        return [said, "past the late policy's cut-off: the submission scores 0"]
    return [f"{said} (late penalty {grades.late_penalty:g} points)" if grades.late_penalty else said]


def lowest_shown(graded: int) -> int:
    """How many of the lowest scores are reasons to reach out, in a class of `graded` graded submissions."""
    return min(LOWEST_SCORES, max(1, graded // 4))


def late_by(seconds: float) -> str:
    """ "1 h 35 min", "12 min", "2 days 3 h": how late, to the minute."""
    minutes = max(1, round(seconds / 60))
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} day{'s' if days > 1 else ''}" if days else "", f"{hours} h" if hours else ""]
    parts.append(f"{minutes} min" if minutes and not days else "")
    return " ".join(part for part in parts if part)


def decimal(value: float | None) -> str:
    """A figure as both the page and the CSV files print it; empty when it has no value."""
    return "" if value is None else f"{value:.3f}"
