"""The status of one submission's outcome, what each status means to every consumer, and how the pre-check says it.

A status's meaning lives on its member, so adding a status is one line here:
the progress line, the tables, the class report, the item statistics, the
proof and the command's exit code read these properties instead of asking
which status a row has.

The pre-check's reply to a student (precheck/reply.py) says one of
`ReplyStatus`'s words: each status of the outcome has its reply word (a
flagged notebook is "held for a TA"), and two more say why a reply shows no
grading at all. The browser extension and the service's clients read these
words on the wire, so they stay as they are.
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


class ReplyStatus(enum.StrEnum):
    """The status a pre-check reply states: the outcome's status in the student's words, or why nothing is shown.

    A `str` underneath, so the reply's JSON reads its word; `status` is the outcome's status it stands for, if any.
    """

    status: Status | None

    def __new__(cls, word: str, status: Status | None) -> ReplyStatus:
        member = str.__new__(cls, word)
        member._value_ = word
        member.status = status
        return member

    GRADED = "graded", Status.GRADED
    HELD_FOR_A_TA = "held for a TA", Status.FLAGGED
    NOT_GRADED = "not graded", Status.FAILED
    GRADER_ERROR = "grader error", Status.GRADER_ERROR
    NOT_SHOWN = "not shown", None  # graded, but the reply would have repeated hidden test code or could not be built
    NOT_RUN = "not run", None  # the service stopped before the check ran

    @classmethod
    def of(cls, status: Status) -> ReplyStatus:
        """The reply's word for an outcome's status."""
        return next(member for member in cls if member.status is status)


def run_exit_code(statuses: Iterable[Status]) -> int:
    """The exit code of a run: that of its most urgent status, 0 when it has no row."""
    return min(statuses, key=lambda status: status.urgency, default=Status.GRADED).exit_code
