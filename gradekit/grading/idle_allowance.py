"""A submission's idle allowance: how long its grading may sit with nothing running, summed over all of it.

A cell's limit is judged on CPU time (cpu_clock.py), and a cell that sleeps
or blocks uses none: only its wall-clock backstop, three times the limit,
ended it, so a submission whose cells each slept just under that held a
grading process for hours. Honest grading almost never sits idle (a few
hundredths of a second per notebook, measured with the benchmark's cohort:
the kernels compute and the grader waits on them), so the seconds in which a
kernel neither runs nor waits for a CPU are counted against one allowance per
submission, shared by every cell and every read. The grading task as a whole
has an allowance of its own, read over the grader's process and its kernels
together (task_budget.py).
"""

from __future__ import annotations

import dataclasses

# The task's own allowance is this many times its cells' (task_budget.py): a cell that sleeps past
# the cells' allowance is interrupted first, as the student's timeout, and the task is ended only for
# idle time no cell's clock sees (cells too short to be read, a kernel ignoring the interrupt, the
# grader's own waits), as the grader's failure, tried again: it cannot tell whose wait it was.
TASK_IDLE_FACTOR = 3


@dataclasses.dataclass
class IdleAllowance:
    """Seconds of idle time one submission may spend in all (`seconds`), and how many it has spent."""

    seconds: float
    spent: float = 0.0

    def charge(self, idle: float) -> None:
        self.spent += max(idle, 0.0)

    @property
    def spent_out(self) -> bool:
        return self.spent > self.seconds

    def describe(self) -> str:
        return f"sat idle {self.spent:.1f} s in all, past its {self.seconds:g} s idle allowance"
