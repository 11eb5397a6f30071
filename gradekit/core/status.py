"""The status of one submission's row in a cohort run, and what each status means to every consumer.

A status's meaning lives on its member, so adding a status is one line here:
the progress line, the tables, the class report, the item statistics, the
proof and the command's exit code read these properties instead of asking
which status a row has.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Iterable


@dataclasses.dataclass(frozen=True)
class Meaning:
    """What a status means, for each place that shows or acts on a row."""

    urgency: int  # tables list rows a TA must act on first: the lowest comes first
    exit_code: int  # what the grading command returns when this is the most urgent status of the run
    has_grades: bool  # the gradebook holds its scores (graded files stored, feedback generated)
    needs_ta: bool  # a TA must look at it before the grade stands
    counts_as_submitted: bool  # its scores count in the class's figures (median, histogram, item statistics)
    headline: str  # how the class report's headline counts it: "3 flagged for a TA"
    reason: str = ""  # why to reach out, before the row's findings or message; empty when no TA is needed
    owner: str = ""  # whose failure the row is, "student" or "grader"; empty when nothing failed or is withheld


class Status(enum.StrEnum):
    """A `str` underneath, so CSV files and printed rows read "graded", "flagged", "failed" or "grader error"."""

    meaning: Meaning

    def __new__(cls, word: str, meaning: Meaning) -> Status:
        member = str.__new__(cls, word)
        member._value_ = word
        member.meaning = meaning
        return member

    GRADED = "graded", Meaning(2, 0, has_grades=True, needs_ta=False, counts_as_submitted=True, headline="graded")
    FLAGGED = (
        "flagged",
        Meaning(
            1,
            4,
            has_grades=True,
            needs_ta=True,
            counts_as_submitted=False,
            headline="flagged for a TA",
            reason="flagged, grade withheld",
            owner="student",
        ),
    )
    FAILED = (
        "failed",
        Meaning(
            0,
            3,
            has_grades=False,
            needs_ta=True,
            counts_as_submitted=False,
            headline="could not be graded",
            reason="could not be graded",
            owner="student",
        ),
    )
    # The grader's own failure, still there after its retries: nothing is scored and the student is not blamed.
    GRADER_ERROR = (
        "grader error",
        Meaning(
            -1,
            5,
            has_grades=False,
            needs_ta=True,
            counts_as_submitted=False,
            headline="not scored: grader error",
            reason="grader error, not scored: grade again",
            owner="grader",
        ),
    )

    @property
    def label(self) -> str:
        """The word the terminal and the CSV files show."""
        return self.value

    @property
    def urgency(self) -> int:
        return self.meaning.urgency

    @property
    def exit_code(self) -> int:
        return self.meaning.exit_code

    @property
    def has_grades(self) -> bool:
        return self.meaning.has_grades

    @property
    def needs_ta(self) -> bool:
        return self.meaning.needs_ta

    @property
    def counts_as_submitted(self) -> bool:
        return self.meaning.counts_as_submitted

    @property
    def headline(self) -> str:
        return self.meaning.headline

    @property
    def reason(self) -> str:
        return self.meaning.reason

    @property
    def owner(self) -> str:
        return self.meaning.owner

    @property
    def failed(self) -> bool:
        """Nothing was graded."""
        return not self.has_grades

    @property
    def withheld(self) -> bool:
        """Graded, but the grade waits for a TA."""
        return self.has_grades and self.needs_ta


def run_exit_code(statuses: Iterable[Status]) -> int:
    """The exit code of a run: that of its most urgent status, 0 when it has no row."""
    return min(statuses, key=lambda status: status.urgency, default=Status.GRADED).exit_code
