"""The grader's own failures met while a notebook runs, kept until the scratch grader looks.

nbgrader turns an exception inside its steps into `success: False` and a log,
and a test cell may catch an exception raised under it; so a stage that meets
one of the grader's causes notes it here as well, and the scratch grader raises
it after the run, whatever became of the exception on its way.
"""

from __future__ import annotations

from gradekit.core.failures import GraderCause, GraderFailure

NOTICED: list[GraderFailure] = []
# A submission can produce these too (an answer that replaces the kernel's answering function):
# when they persist on a fresh kernel, the submission's own finding stands.
# A kernel can also SIGKILL itself: when it dies that way on every try, the cells it stopped score as the student's.
THE_SUBMISSION_CAN_CAUSE = frozenset({GraderCause.REPLY_UNREADABLE, GraderCause.KERNEL_KILLED})


def notice(failure: GraderFailure) -> GraderFailure:
    """Keep `failure` for the scratch grader and hand it back, to be raised where it was met."""
    NOTICED.append(failure)
    return failure


def raise_noticed(last_attempt: bool) -> None:
    """Raise the first failure noticed since the last call; on the last try, leave the ambiguous ones to the findings."""
    failures = [f for f in NOTICED if not (last_attempt and f.cause in THE_SUBMISSION_CAN_CAUSE)]
    NOTICED.clear()
    if failures:
        raise failures[0]


def backoff_seconds(attempt: int, first_wait: float) -> float:
    """The wait before try number `attempt` (2, 3, ...): `first_wait`, twice as long for each later try."""
    return first_wait * 2 ** max(attempt - 2, 0)
