"""The grader's own failures: which of them a submission can cause too, and how long to wait before a retry.

Those met while a notebook runs are noticed in the run's sink (run_sink.py).
"""

from __future__ import annotations

from gradekit.core.failures import GraderCause

# A submission can produce these too (an answer that replaces the kernel's answering function):
# when they persist on a fresh kernel, the submission's own finding stands.
# A kernel can also SIGKILL itself: when it dies that way on every try, the cells it stopped score as the student's.
THE_SUBMISSION_CAN_CAUSE = frozenset({GraderCause.REPLY_UNREADABLE, GraderCause.KERNEL_KILLED})


def backoff_seconds(attempt: int, first_wait: float) -> float:
    """The wait before try number `attempt` (2, 3, ...): `first_wait`, twice as long for each later try."""
    return first_wait * 2 ** max(attempt - 2, 0)
