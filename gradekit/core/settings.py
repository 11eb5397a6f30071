"""The kit's own settings: typed traits with help, set as `c.CourseKit.*` and `c.Precheck.*` in nbgrader_config.py.

nbgrader ignores this section; `load_course` reads it once and keeps the typed values on the course.
`python -m gradekit --help-all` lists every setting with its type, default and help.
"""

from __future__ import annotations

import dataclasses
import datetime
import re

from traitlets import Bool, Bunch, Dict, Float, Integer, List, TraitError, Unicode, validate
from traitlets.config import Configurable

# An assignment id names a folder under source/ and release/, and nbgrader's gradebook key.
ASSIGNMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class CourseKit(Configurable):
    """Settings of the course kit that nbgrader itself has no trait for."""

    assignment_id = Unicode(
        "autograd",
        help="The course's one assignment: its folder under source/ and release/ and its name in the gradebook.",
    ).tag(config=True)

    kernel_memory_gb = Float(
        8.0,
        help=(
            "Address space, in GiB, that each grading kernel of the kit's parallel grader may use; "
            "a submission that needs more fails its own cell instead of exhausting the machine."
        ),
    ).tag(config=True)

    grader_attempts = Integer(
        3,
        help=(
            "How many times the parallel grader tries a submission whose grading failed for a reason of its own "
            "(a kernel or worker that did not start or was lost, a missing temporary file, an overloaded machine); "
            "after the last try the row is a grader error, never a score."
        ),
    ).tag(config=True)

    retry_backoff_seconds = Float(
        0.5,
        help=(
            "Seconds to wait before the second try of a grader-owned failure; each later try waits twice as long, "
            "so that a busy machine has time to recover."
        ),
    ).tag(config=True)

    idle_seconds = Float(
        10.0,
        help=(
            "Seconds each notebook of a submission may spend, in all, with its grading sitting idle: its kernel "
            "sleeping or blocked, neither running nor waiting for a CPU (honest grading sits idle a few hundredths "
            "of a second per notebook). The allowance is this times the submission's notebooks, shared by all its "
            "cells: once it is spent, a cell that sits idle a moment longer is interrupted (the student's timeout, as "
            "a cell past its limit). A grading task that sits idle three times as long, its grader's own waits "
            "included, is ended and tried again as the grader's failure. Until then, only a cell's wall-clock "
            "backstop (three times its limit) ends a sleeping cell. Where "
            "the system does not report run-queue waits (/proc/<pid>/schedstat), idle time cannot be told from a "
            "busy machine, and only the backstops apply."
        ),
    ).tag(config=True)

    allow_unconfined = Bool(
        False,
        help=(
            "Let the parallel grader run grading kernels without their operating-system box (bubblewrap) on a "
            "machine that cannot make one. Off by default: such a machine is refused, and when allowed every row "
            "says it was graded unconfined. The command line's --allow-unconfined sets it for one run."
        ),
    ).tag(config=True)

    # The term: each assignment's one due date, read by the pre-check, intake, the late policy,
    # the release's header, the class report and the LMS export (extensions live in extensions.json).
    due_dates = Dict(
        value_trait=Unicode(),
        help=(
            "Assignment id -> its due date, ISO 8601 with a time zone (e.g. '2026-12-18T23:00:00+00:00'). "
            "The one due date of the assignment: the release's notebook headers and the pre-check show it, the "
            "pre-check closes at it, grading measures lateness from it (or from a student's extension, granted "
            "with `gradekit extend`) and the late policy (c.LatePolicy.*) decides the penalty. Without one, "
            "nothing is late."
        ),
    ).tag(config=True)

    @validate("due_dates")
    def _dates_with_zone(self, proposal: Bunch) -> dict[str, str]:
        for assignment, text in proposal["value"].items():
            zoned_date(text, f"CourseKit.due_dates[{assignment!r}]")
        return proposal["value"]

    @validate("grader_attempts")
    def _at_least_one_attempt(self, proposal: Bunch) -> int:
        value = proposal["value"]
        if value < 1:
            raise TraitError(f"CourseKit.grader_attempts must be at least 1, got {value}")
        return value

    @validate("retry_backoff_seconds")
    def _a_wait_that_is_not_negative(self, proposal: Bunch) -> float:
        value = proposal["value"]
        if value < 0:
            raise TraitError(f"CourseKit.retry_backoff_seconds must not be negative, got {value}")
        return value

    @validate("assignment_id")
    def _a_folder_name(self, proposal: Bunch) -> str:
        value = proposal["value"]
        if not ASSIGNMENT_ID.fullmatch(value):
            raise TraitError(
                f"CourseKit.assignment_id must be a plain folder name (letters, digits, '_', '.', '-'), got {value!r}"
            )
        return value

    @validate("kernel_memory_gb")
    def _a_positive_size(self, proposal: Bunch) -> float:
        value = proposal["value"]
        if not value > 0:
            raise TraitError(f"CourseKit.kernel_memory_gb must be more than 0 GiB, got {value}")
        return value

    @validate("idle_seconds")
    def _a_positive_allowance(self, proposal: Bunch) -> float:
        value = proposal["value"]
        if not value > 0:
            raise TraitError(f"CourseKit.idle_seconds must be more than 0 s, got {value}")
        return value


class Precheck(Configurable):
    """Settings of the sealed pre-check, the hub service that grades a student's saved notebook before the deadline.

    Set as `c.Precheck.*` in nbgrader_config.py; the service reads them once when it starts.
    """

    enabled = Bool(
        True,
        help="Whether the pre-check grades anything at all; False turns it off for every assignment.",
    ).tag(config=True)

    closed_assignments = List(
        Unicode(),
        help="Assignments whose pre-check is switched off, by assignment id; a request for one is refused with a message.",
    ).tag(config=True)

    cooldown_seconds = Float(
        300.0,
        help="Seconds a student waits, after a pre-check of one notebook, before pre-checking that notebook again.",
    ).tag(config=True)

    daily_quota = Integer(
        12,
        help="Pre-checks each student may run of one notebook per day (UTC); a check the grader itself failed is not counted.",
    ).tag(config=True)

    workers = Integer(
        1,
        help=(
            "Checks graded at once: the grading processes the service keeps warm, or, with Precheck.scheduler, the "
            "checks it sends to the cluster at a time; requests wait in a queue served round robin across students."
        ),
    ).tag(config=True)

    request_window_seconds = Float(
        300.0,
        help=(
            "How old a request may be (its `sent` time against the service's clock) and how long its nonce is "
            "remembered: a request sent again within the window is refused as a replay, an older one as stale."
        ),
    ).tag(config=True)

    check_seconds = Float(
        0.0,
        help=(
            "CPU seconds one pre-check may use in all (its grading process and the kernels it starts); past them, "
            "or past three times as many seconds of wall clock, its grading process is killed and replaced and the "
            "check ends as the student's timeout (the grader's failure, not counted, when a loaded machine held it "
            "back). 0 derives it from the cells' time limit (Execute.timeout): two cells run to their limit, for each "
            "of the grader's tries (CourseKit.grader_attempts)."
        ),
    ).tag(config=True)

    scheduler = Unicode(
        "",
        help=(
            "The address of a Dask scheduler (tcp://host:8786) whose workers grade the pre-checks, as they grade the "
            "cohort with `gradekit grade --scheduler`; the service keeps the queue, the cooldown and the quota, and "
            "sends Precheck.workers checks at a time. The workers must see the service's state folder at the same "
            "path. Empty: the service's own warm grading processes on this machine."
        ),
    ).tag(config=True)

    @validate("cooldown_seconds", "request_window_seconds", "check_seconds")
    def _not_negative(self, proposal: Bunch) -> float:
        value = proposal["value"]
        if value < 0:
            raise TraitError(f"Precheck.{proposal['trait'].name} must not be negative, got {value}")
        return value

    @validate("daily_quota", "workers")
    def _at_least_one(self, proposal: Bunch) -> int:
        value = proposal["value"]
        if value < 1:
            raise TraitError(f"Precheck.{proposal['trait'].name} must be at least 1, got {value}")
        return value


@dataclasses.dataclass(frozen=True)
class PrecheckSettings:
    """The pre-check's settings as plain values, read once from `c.Precheck.*` (see `Precheck` for each one's help)."""

    enabled: bool = True
    closed_assignments: tuple[str, ...] = ()
    due_dates: tuple[tuple[str, datetime.datetime], ...] = ()
    cooldown_seconds: float = 300.0
    daily_quota: int = 12
    workers: int = 1
    request_window_seconds: float = 300.0
    check_seconds: float = 0.0  # 0: derived from the cells' time limit by the engine
    scheduler: str = ""  # a Dask scheduler's address; "": grading processes on the service's machine

    @classmethod
    def from_traits(cls, traits: Precheck, kit: CourseKit) -> "PrecheckSettings":
        """The pre-check's settings; its due dates are the course's own (`CourseKit.due_dates`)."""
        return cls(
            enabled=traits.enabled,
            closed_assignments=tuple(traits.closed_assignments),
            due_dates=due_dates_of(kit),
            cooldown_seconds=traits.cooldown_seconds,
            daily_quota=traits.daily_quota,
            workers=traits.workers,
            request_window_seconds=traits.request_window_seconds,
            check_seconds=traits.check_seconds,
            scheduler=traits.scheduler,
        )

    def due_date(self, assignment: str) -> datetime.datetime | None:
        return dict(self.due_dates).get(assignment)


def zoned_date(text: str, where: str) -> datetime.datetime:
    """An ISO 8601 date with its time zone; anything else is a TraitError that names `where`."""
    try:
        when = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise TraitError(f"{where} is not an ISO 8601 date: {text!r}") from None
    if when.tzinfo is None:
        raise TraitError(f"{where} needs a time zone (e.g. +00:00): {text!r}")
    return when


def due_dates_of(kit: CourseKit) -> tuple[tuple[str, datetime.datetime], ...]:
    """The course's due dates as (assignment id, zoned date), by assignment id."""
    return tuple(sorted((name, datetime.datetime.fromisoformat(text)) for name, text in kit.due_dates.items()))
