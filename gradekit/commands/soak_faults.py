"""Faults injected into a grading run from outside, on a timer, each recorded as it is injected.

Every fault is one the grader owns (DESIGN: "Failures have owners"): a lost
kernel or worker, a worker that stalls, a kernel's temporary folder that
vanishes, a gradebook that is briefly busy. None is the student's doing, so
none may change a grade.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import os
import random
import shutil
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable

from gradekit.commands.soak_processes import GradingTree, ProcessEntry, grading_tree, is_alive

TARGET_POLL_SECONDS = 0.2
# Where warm_kernels.py keeps each kernel's folder: in a worker's folder of kernel folders,
# itself in the run's folder of temporary files (a pool's) or straight in the temporary folder.
KERNEL_FOLDER_PATTERNS = ("kit-kernels-*/k*", "gradekit-run-*/kit-kernels-*/k*")


class FaultKind(enum.Enum):
    """What the soak does; the value is how the report says it."""

    KILL_KERNEL = "killed a kernel"
    STOP_WORKER = "stopped a worker for a while"
    DELETE_KERNEL_TMP = "deleted a kernel's temporary folder"
    LOCK_GRADEBOOK = "held the gradebook locked"
    KILL_WORKER = "killed a worker"


# The last kind breaks the worker pool: the executor then grades what is left one submission at a time,
# so it comes last, when little is left.
EVERY_KIND = tuple(FaultKind)


@dataclasses.dataclass(frozen=True)
class Fault:
    kind: FaultKind
    target: str  # which process or file it hit
    seconds: float  # after the loaded run started


@dataclasses.dataclass(frozen=True)
class FaultPlan:
    kinds: tuple[FaultKind, ...] = EVERY_KIND  # injected in this order, one each
    interval_seconds: float = 5.0  # at least this long before each fault
    # Fault i of k also waits until i/(k+1) of `spread` of the cohort is graded, so the faults fall
    # across the whole run, however long the load makes it; 0 paces them by time alone.
    spread: float = 1.0
    stop_seconds: float = 5.0  # how long a stopped worker stays stopped
    lock_seconds: float = 1.5  # how long the gradebook stays locked
    seed: int = 0  # which of the candidate processes is hit


class FaultInjector:
    """A thread that injects the plan's faults into the grading below `coordinator`, from `__enter__` on.

    `spare` are the coordinator's children that do not grade (the soak's load);
    `gradebook` is the SQLite file to lock; `temp_dir` is where the kernels'
    private folders are made; `graded_share` says which share of the cohort is
    graded so far (0 to 1). `__exit__` stops the thread and resumes any worker
    it left stopped.
    """

    def __init__(
        self,
        plan: FaultPlan,
        coordinator: int,
        spare: frozenset[int],
        gradebook: Path,
        temp_dir: Path,
        graded_share: Callable[[], float] = lambda: 1.0,
    ) -> None:
        self.plan = plan
        self.graded_share = graded_share
        self.coordinator = coordinator
        self.spare = spare
        self.gradebook = gradebook
        self.temp_dir = temp_dir
        self.faults: list[Fault] = []
        self.seen: dict[int, ProcessEntry] = {}  # every grading process met, for the final sweep
        self._random = random.Random(plan.seed)
        self._done = threading.Event()
        self._stopped: ProcessEntry | None = None
        self._thread = threading.Thread(target=self._run, name="soak-faults", daemon=True)
        self._started = 0.0

    def __enter__(self) -> FaultInjector:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._done.set()
        self._thread.join()
        self._resume_stopped()

    def _run(self) -> None:
        for number, kind in enumerate(self.plan.kinds, 1):
            if self._done.wait(self.plan.interval_seconds):
                return
            share = self.plan.spread * number / (len(self.plan.kinds) + 1)
            while self.graded_share() < share:
                if self._done.wait(TARGET_POLL_SECONDS):
                    return
            while not self._done.is_set():
                target = self._inject(kind, self._look())
                if target is not None:
                    self.faults.append(Fault(kind, target, time.monotonic() - self._started))
                    break
                self._done.wait(TARGET_POLL_SECONDS)  # nothing to hit yet: look again shortly

    def _look(self) -> GradingTree:
        tree = grading_tree(self.coordinator, self.spare)
        self.seen.update((entry.pid, entry) for entry in tree.everyone)
        return tree

    def _inject(self, kind: FaultKind, tree: GradingTree) -> str | None:
        """Inject one fault of `kind`; what it hit, or None when nothing could be hit now."""
        if kind is FaultKind.KILL_KERNEL:
            return self._signal(tree.kernels, signal.SIGKILL, "kernel")
        if kind is FaultKind.KILL_WORKER:
            return self._signal(tree.workers, signal.SIGKILL, "worker")
        if kind is FaultKind.STOP_WORKER:
            return self._stop_a_worker(tree.workers)
        if kind is FaultKind.DELETE_KERNEL_TMP:
            return self._delete_kernel_tmp(tree.kernels)
        return self._lock_gradebook()

    def _signal(self, candidates: tuple[ProcessEntry, ...], signum: int, what: str) -> str | None:
        entry = self._pick(candidates)
        if entry is None:
            return None
        os.kill(entry.pid, signum)
        return f"{what} {entry.pid}"

    def _pick(self, candidates: tuple[ProcessEntry, ...]) -> ProcessEntry | None:
        """One of the candidates, chosen by the plan's seed, if it still runs."""
        if not candidates:
            return None
        entry = self._random.choice(candidates)
        return entry if is_alive(entry) else None

    def _stop_a_worker(self, workers: tuple[ProcessEntry, ...]) -> str | None:
        worker = self._pick(workers)
        if worker is None:
            return None
        self._stopped = worker  # resumed below, or by __exit__ if the soak ends first
        os.kill(worker.pid, signal.SIGSTOP)
        self._done.wait(self.plan.stop_seconds)
        self._resume_stopped()
        return f"worker {worker.pid} for {self.plan.stop_seconds:g} s"

    def _resume_stopped(self) -> None:
        stopped, self._stopped = self._stopped, None
        if stopped is not None and is_alive(stopped):
            os.kill(stopped.pid, signal.SIGCONT)

    def _delete_kernel_tmp(self, kernels: tuple[ProcessEntry, ...]) -> str | None:
        if not kernels:
            return None
        folder = kernel_tmp_folder(self.temp_dir)
        if folder is None:
            return None
        shutil.rmtree(folder, ignore_errors=True)
        return f"{folder.name} ({len(kernels)} kernels running)"

    def _lock_gradebook(self) -> str:
        with contextlib.closing(sqlite3.connect(self.gradebook, timeout=60, isolation_level=None)) as connection:
            connection.execute("BEGIN EXCLUSIVE")
            self._done.wait(self.plan.lock_seconds)
            connection.execute("ROLLBACK")
        return f"{self.gradebook.name} for {self.plan.lock_seconds:g} s"


def kernel_tmp_folder(temp_dir: Path) -> Path | None:
    """The folder of a kernel at work now: of those under `temp_dir`, the one whose mailbox was written last.

    The folder is found where the grader makes it (a boxed kernel's paths mean
    nothing outside its box). The soak gives its grading a temporary directory
    of its own, so every candidate is one of its own kernels' folders; the
    grader writes a kernel's requests into its mailbox, so the mailbox written
    last belongs to a live kernel rather than to one already lost.
    """
    made = []
    for folder in (found for pattern in KERNEL_FOLDER_PATTERNS for found in temp_dir.glob(pattern)):
        try:
            made.append(((folder / "mailbox").stat().st_mtime, folder.name, folder))
        except FileNotFoundError:
            continue  # the grader removed it as we looked
    return max(made)[2] if made else None
