"""How hard each exercise and test cell was, and whether it tells strong students from weak ones.

Only students who submitted a notebook count for its items: a left-out notebook
scores zero without saying anything about the exercise. Flagged submissions wait
for a TA and failed ones have no scores, so both stay out.

* share earned: the mean share of the item's points that those students earned
  (1.0: all of them passed; low: the exercise, or its check, needs a look);
* discrimination: the point-biserial correlation between the item's score and
  the rest of the student's total (the total minus this item), so that the item
  is not correlated with itself. Near zero or negative, the item does not follow
  what the rest of the assignment measures: worth a look. From a handful of
  students it says nothing, so below `MIN_SUBMITTERS` it is not computed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

from gradekit.core.manifest import Manifest, ManualAnswer, TestCell
from gradekit.core.outcome import Outcome

# Below this the item hardly separates students (the usual rule of thumb is 0.2 for good items).
LOW_DISCRIMINATION = 0.1
# A correlation from fewer students swings with one student's score.
MIN_SUBMITTERS = 10
# Below this share of the points earned, an item is among the weakest and is shown first.
WEAK_SHARE = 0.5


@dataclasses.dataclass(frozen=True)
class Correlation:
    """A correlation, or why it cannot be computed (then `value` is None)."""

    value: float | None
    reason: str = ""
    too_few: bool = False  # not computed for want of submitters: the page says so once, not on every row


@dataclasses.dataclass(frozen=True)
class ItemStats:
    """One exercise (all its test cells) or one test cell, over the students who submitted its notebook."""

    notebook: str
    exercise: str
    cell: str  # empty for a whole exercise
    points: float
    submitted: int
    full_marks: int
    share_earned: float | None
    discrimination: Correlation

    @property
    def flagged(self) -> bool:
        value = self.discrimination.value
        return value is not None and value < LOW_DISCRIMINATION

    @property
    def weak(self) -> bool:
        return self.share_earned is not None and self.share_earned < WEAK_SHARE

    @property
    def needs_a_look(self) -> bool:
        return self.weak or self.flagged

    @property
    def attention_order(self) -> tuple:
        """Sorts what needs a look first: weakest, then least discriminating."""
        share = 1.0 if self.share_earned is None else self.share_earned
        value = 1.0 if self.discrimination.value is None else self.discrimination.value
        return (not self.needs_a_look, share, value)

    @property
    def remark(self) -> str:
        return (self._weak_remark + self._discrimination_remark).rstrip("; ")

    @property
    def _weak_remark(self) -> str:
        return (
            f"weak: {self.share_earned:.0%} of its points earned; "
            if self.weak and self.share_earned is not None
            else ""
        )

    @property
    def row_remark(self) -> str:
        """The remark without "too few submitters", which the page says once for all its rows."""
        return self.remark if not self.discrimination.too_few else self._weak_remark.rstrip("; ")

    @property
    def _discrimination_remark(self) -> str:
        value = self.discrimination.value
        if value is None:
            return f"discrimination not computed: {self.discrimination.reason}"
        if value < 0:
            return "negative discrimination: students who did well elsewhere did worse here"
        if value < LOW_DISCRIMINATION:
            return "discrimination near zero: does not follow the rest of the assignment"
        return ""


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def point_biserial(item: Sequence[float], rest: Sequence[float], minimum: int = MIN_SUBMITTERS) -> Correlation:
    """Pearson's r of the item's scores with the rest scores (point-biserial when the item is pass/fail)."""
    if len(item) < max(minimum, 2):
        return Correlation(None, f"too few submitters ({len(item)}; it takes {max(minimum, 2)})", too_few=True)
    item_mean, rest_mean = sum(item) / len(item), sum(rest) / len(rest)
    item_spread = sum((x - item_mean) ** 2 for x in item)
    rest_spread = sum((y - rest_mean) ** 2 for y in rest)
    if item_spread == 0:
        return Correlation(None, _same_item_score(item))
    if rest_spread == 0:
        return Correlation(None, "every submitter scored the same on the rest")
    covariance = sum((x - item_mean) * (y - rest_mean) for x, y in zip(item, rest))
    return Correlation(covariance / math.sqrt(item_spread * rest_spread))


def _same_item_score(item: Sequence[float]) -> str:
    if item[0] >= 1:
        return "every submitter passed"
    if item[0] == 0:
        return "every submitter scored 0"
    return "every submitter scored the same"


def item_stats(
    notebook: str,
    exercise: str,
    cell: str,
    tests: tuple[TestCell, ...],
    rows: tuple[Outcome, ...],
    minimum: int = MIN_SUBMITTERS,
) -> ItemStats:
    """The figures of the item made of `tests` (one test cell, or all of an exercise's)."""
    takers = [r.grades for r in rows if r.status.counts_as_submitted and r.grades and r.grades.submitted(notebook)]
    points = sum(t.points for t in tests)
    scores = [sum(_score(grades, notebook, t.cell) for t in tests) for grades in takers]
    fractions = [score / points if points else 0.0 for score in scores]
    rest = [grades.score - score for grades, score in zip(takers, scores)]
    return ItemStats(
        notebook=notebook,
        exercise=exercise,
        cell=cell,
        points=points,
        submitted=len(takers),
        full_marks=sum(1 for score in scores if score >= points),
        share_earned=mean(fractions),
        discrimination=point_biserial(fractions, rest, minimum),
    )


def _score(grades, notebook: str, cell: str) -> float:
    grade = grades.cell(notebook, cell)
    return grade.score if grade else 0.0  # a test cell nbgrader did not record earned nothing


def exercise_stats(
    manifest: Manifest, rows: tuple[Outcome, ...], minimum: int = MIN_SUBMITTERS
) -> tuple[ItemStats, ...]:
    """Every exercise in manifest order, named by its answer cell."""
    return tuple(item_stats(e.notebook, e.answer_cell, "", e.tests, rows, minimum) for e in manifest.exercises)


def cell_stats(manifest: Manifest, rows: tuple[Outcome, ...], minimum: int = MIN_SUBMITTERS) -> tuple[ItemStats, ...]:
    """Every test cell in manifest order."""
    return tuple(
        item_stats(e.notebook, e.answer_cell, t.cell, (t,), rows, minimum) for e in manifest.exercises for t in e.tests
    )


@dataclasses.dataclass(frozen=True)
class WrittenStats:
    """One written answer a TA grades, over the students who submitted its notebook: how far its grading is."""

    notebook: str
    answer_cell: str
    points: float
    submitted: int
    waiting: int  # answered, not graded yet
    graded: int  # graded by a TA
    blank: int  # left as the release had it: 0 points, nothing to grade
    full_marks: int
    share_earned: float | None  # over the graded and blank answers; None until a TA has graded one

    @property
    def needs_a_look(self) -> bool:
        return self.waiting > 0

    @property
    def state(self) -> str:
        """ "3 waiting for a TA; 2 graded; 1 left blank (0 points)", or "nobody submitted it"."""
        parts = [
            f"{self.waiting} waiting for a TA" if self.waiting else "",
            f"{self.graded} graded" if self.graded else "",
            f"{self.blank} left blank (0 points)" if self.blank else "",
        ]
        return "; ".join(part for part in parts if part) or "nobody submitted it"


def written_stats(manifest: Manifest, rows: tuple[Outcome, ...]) -> tuple[WrittenStats, ...]:
    """Every written answer in manifest order."""
    return tuple(_written_item(answer, rows) for answer in manifest.manual)


def _written_item(answer: ManualAnswer, rows: tuple[Outcome, ...]) -> WrittenStats:
    takers = [
        r.grades for r in rows if r.status.counts_as_submitted and r.grades and r.grades.submitted(answer.notebook)
    ]
    found = [
        w for grades in takers for w in grades.written if (w.notebook, w.cell) == (answer.notebook, answer.answer_cell)
    ]
    scored = [w for w in found if w.score is not None]
    return WrittenStats(
        notebook=answer.notebook,
        answer_cell=answer.answer_cell,
        points=answer.points,
        submitted=len(takers),
        waiting=sum(1 for w in found if w.waiting),
        graded=sum(1 for w in scored if not w.blank),
        blank=sum(1 for w in scored if w.blank),
        full_marks=sum(1 for w in scored if w.score is not None and w.score >= w.max_score),
        # Blank answers alone say nothing of the question: the share waits for a TA's first grade.
        share_earned=mean([(w.score or 0.0) / w.max_score for w in scored if w.max_score])
        if any(not w.blank for w in scored)
        else None,
    )
