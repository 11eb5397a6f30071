"""The grader's own failures: which of them a submission can cause too, which spare the warm parent, and how long
to wait before a retry.

Those met while a notebook runs are noticed in the run's sink (run_sink.py).
"""

from __future__ import annotations

from gradekit.core.failures import GraderCause

# A submission can produce these too (an answer that replaces the kernel's answering function):
# when they persist on a fresh kernel, the submission's own finding stands.
# A kernel can also SIGKILL itself: when it dies that way on every try, the cells it stopped score as the student's.
THE_SUBMISSION_CAN_CAUSE = frozenset({GraderCause.REPLY_UNREADABLE, GraderCause.KERNEL_KILLED})

# These lie in one kernel, the machine's load or the gradebook, never in the warm parent that forks the
# kernels or its folders: a retry forks its fresh kernel from the same parent. A new parent costs seconds of
# CPU (its imports), which an overloaded machine, or a kernel that kills itself on every try, would otherwise
# take from the whole class. Every other cause (a kernel that would not start, a folder gone, a guard left
# unarmed, a stall, the kit's own error) retries from a fresh parent, in case the fault lay there.
THE_WARM_PARENT_OUTLIVES = frozenset(
    {GraderCause.KERNEL_KILLED, GraderCause.REPLY_UNREADABLE, GraderCause.OVERLOADED, GraderCause.GRADEBOOK_BUSY}
)


def backoff_seconds(attempt: int, first_wait: float) -> float:
    """The wait before try number `attempt` (2, 3, ...): `first_wait`, twice as long for each later try."""
    return first_wait * 2 ** max(attempt - 2, 0)
