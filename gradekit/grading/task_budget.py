"""A grading task's budget: CPU and wall seconds for one whole submission, kept from inside its worker process.

Every cell has its own time limit, but the grader's own work between cells
(decoding a kernel's reply, waiting on a kernel) has none; a hostile
submission can make that work last for ever. A worker grading under a budget
runs a watchdog thread that reads the worker's clock (its own CPU time and
that of every process it started, as a cell's clock does, but for its warm
parent's own work, which is the grader's) and, past the
budget, leaves a verdict beside the task and kills the worker with SIGKILL,
so its coordinator replaces it. A wall-clock timer with the default SIGALRM
action kills the worker as well if the watchdog itself never gets to run.

Whose failure it is follows the cell's rules (cpu_clock.py): more CPU time than
the budget, or a wait past the wall-clock backstop on a machine that let the
worker run, is the student's timeout; a worker held back by a loaded machine
is the grader's failure, tried again. So is a task idle past its own idle
allowance (idle_allowance.py): the task's clock reads the grader's process too,
whose own waits (a kernel that never starts, a backoff) count as idle there; a
student's sleep the cells' clocks see is the student's timeout at the cell.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.status import Status
from gradekit.grading.cpu_clock import BACKSTOP_FACTOR, CellClock, Usage, Verdict, kernel_usage
from gradekit.grading.idle_allowance import TASK_IDLE_FACTOR, IdleAllowance
from gradekit.grading.submission_grader import GradedSubmission, grader_error
from gradekit.grading.warm_kernels import clocked_parent, discard_zygote, lent_parent

Result = TypeVar("Result")

# A submission may use, for all its grading, the CPU of this many of its cells run to their limit:
# an honest notebook uses a small part of one cell's limit, and every cell is limited on its own as well.
CELL_LIMITS_PER_NOTEBOOK = 2
# Seconds past the wall-clock backstop after which the operating system's timer ends the worker
# when the watchdog could not (a task that never lets the watchdog's thread run).
LAST_RESORT_SECONDS = 10
# How often the watchdog reads the worker's clock: each reading scans every process of the machine,
# and a budget of minutes needs no finer watch than a second.
WATCH_SECONDS = 1.0
# The verdicts that end a task as the grader's failure, tried again, with the cause its row names.
GRADERS_VERDICTS = MappingProxyType(
    {Verdict.OVERLOADED: GraderCause.OVERLOADED, Verdict.IDLE_SPENT: GraderCause.STALLED}
)
# How the row of a submission its budget ended begins, for those who answer the student in fixed words.
PAST_BUDGET = "grading ran past its time budget"


@dataclasses.dataclass(frozen=True)
class TaskBudget:
    """CPU seconds one task may use, and idle seconds (None: only the wall clock ends a task that sleeps).

    Its wall-clock backstop is the cells' `BACKSTOP_FACTOR` times the CPU seconds.
    """

    cpu_seconds: float
    idle_seconds: float | None = None

    @property
    def wall_seconds(self) -> float:
        return BACKSTOP_FACTOR * self.cpu_seconds

    @classmethod
    def for_cells(
        cls, cell_timeout: float, notebooks: int = 1, attempts: int = 1, idle_seconds: float | None = None
    ) -> TaskBudget:
        """The budget of a submission of `notebooks` notebooks whose cells each have `cell_timeout` seconds.

        A task retries the grader's own failures inside itself (a fresh kernel): each try gets the whole CPU budget,
        so that a grader slow to recover never turns into the student's timeout. Idle time is never retried:
        the task may sit idle `TASK_IDLE_FACTOR` times the cells' allowance of `idle_seconds` per notebook.
        """
        notebooks = max(notebooks, 1)
        cpu = CELL_LIMITS_PER_NOTEBOOK * float(cell_timeout) * notebooks * max(attempts, 1)
        return cls(cpu, TASK_IDLE_FACTOR * idle_seconds * notebooks if idle_seconds else None)


@dataclasses.dataclass(frozen=True)
class OverBudget:
    """What the watchdog leaves beside a task it ended: the verdict and how the clock read."""

    verdict: Verdict
    description: str

    @property
    def students_fault(self) -> bool:
        """A worker held back by a loaded machine, or idle past the task's allowance, is the grader's failure."""
        return self.verdict not in GRADERS_VERDICTS

    def row(self, student_id: str, attempts: int = 1) -> GradedSubmission:
        """The student's timeout (a failed row), or the grader's failure (a grader error after its tries)."""
        if not self.students_fault:
            failure = GraderFailure(GRADERS_VERDICTS[self.verdict], f"grading this submission {self.description}")
            return grader_error(student_id, failure, attempts)
        message = f"{PAST_BUDGET} and was stopped: it {self.verdict.value} ({self.description})"
        return GradedSubmission(
            student_id=student_id,
            status=Status.FAILED,
            message=message,
            record=None,
            files=(),
            seconds=0.0,
            attempts=attempts,
        )


def over_budget(verdict_file: Path) -> OverBudget | None:
    """The verdict the watchdog left in `verdict_file`, or None when the task was not ended for its budget."""
    try:
        saved = json.loads(Path(verdict_file).read_text())
        return OverBudget(Verdict[saved["verdict"]], str(saved["description"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def ended_by_timer(seconds: float, budget: TaskBudget) -> OverBudget | None:
    """A worker lost after `seconds`, with no verdict left: the operating system's timer ended it, if that long."""
    if seconds < budget.wall_seconds + LAST_RESORT_SECONDS:
        return None
    return OverBudget(Verdict.SAT_IDLE, f"the watchdog could not run, and the timer ended it after {seconds:.0f} s")


def _with_lent_parent(worker: int) -> Usage:
    """The worker's processes and what they started, and the warm parent lent to it with its kernels (kept_parents.py).

    The warm parent's own CPU (its imports above all, seconds on a loaded machine, paid by whichever
    task met a fresh one) is the grader's: the student's budget counts the kernels it forks, not it.
    """
    lent, grader = clocked_parent()
    return kernel_usage(worker, lent, grader)


def within_budget(budget: TaskBudget, verdict_file: str, task: Callable[..., Result], *args: object) -> Result:
    """Run `task(*args)` in this worker; past `budget`, the worker is killed and the verdict left in `verdict_file`."""
    allowance = IdleAllowance(budget.idle_seconds) if budget.idle_seconds else None
    clock = CellClock(os.getpid(), budget.cpu_seconds, usage=_with_lent_parent, allowance=allowance)
    clock.resume()
    finished = threading.Event()
    watchdog = threading.Thread(target=_watch, args=(clock, finished, Path(verdict_file)), daemon=True)
    previous = signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, budget.wall_seconds + LAST_RESORT_SECONDS)
    watchdog.start()
    try:
        return task(*args)
    finally:
        finished.set()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        watchdog.join()


def _watch(clock: CellClock, finished: threading.Event, verdict_file: Path) -> None:
    while not finished.wait(WATCH_SECONDS):
        verdict = clock.verdict()
        if verdict is not Verdict.RUNNING:
            verdict_file.write_text(json.dumps({"verdict": verdict.name, "description": clock.describe()}))
            if lent_parent() is not None:  # not this worker's child: it would outlive it, its kernel running
                discard_zygote()
            os.kill(os.getpid(), signal.SIGKILL)
