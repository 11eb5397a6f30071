"""The grader's own failures: what went wrong on our side, so that it is retried and never scored.

Every way a notebook's grading can end belongs to the student (their code
raised, ran too long on an idle machine, ran out of memory, tampered) or to
the grader (the causes below). A stage that meets one of the grader's causes
raises `GraderFailure`; the grader retries it on a fresh kernel or worker and,
if it persists, reports the row as the grader's error, never as a zero.
"""

from __future__ import annotations

import enum


class GraderCause(enum.Enum):
    """Why grading failed for a reason of our own; the value is how a TA reads it."""

    KERNEL_START = "a grading kernel did not start"
    ZYGOTE_START = "the warm kernel parent did not start"
    NO_SANDBOX = "grading kernels cannot be boxed on this machine"
    WORKER_LOST = "the grading worker was lost"
    KERNEL_KILLED = "a grading kernel was killed from outside (SIGKILL)"
    GUARD_NOT_ARMED = "the grading guard could not be armed"
    TEMP_FILE_MISSING = "a kernel's temporary file went missing"
    REPLY_UNREADABLE = "a live, untampered kernel's reply could not be read"
    OVERLOADED = "the machine was too loaded to judge the time limit"
    STALLED = "a call to the kernel made no progress (the watchdog ended it)"
    GRADEBOOK_BUSY = "the gradebook stayed busy"
    INTERNAL_ERROR = "the grader's own code failed"


class GraderFailure(Exception):
    """Raised where a grader-owned failure is met; carries its cause and a detail for the log."""

    def __init__(self, cause: GraderCause, detail: str = ""):
        super().__init__(f"{cause.value}: {detail}" if detail else cause.value)
        self.cause = cause
        self.detail = detail

    def __reduce__(self) -> tuple[type[GraderFailure], tuple[GraderCause, str]]:
        # Workers send failures back by pickle; keep both fields.
        return type(self), (self.cause, self.detail)
