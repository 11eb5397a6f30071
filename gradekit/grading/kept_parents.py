"""Warm parents a process keeps from one grading run to the next, lent to each run's pool workers.

A warm parent (warm_kernels.Zygote) costs about two seconds of CPU to start: it imports torch and
ipykernel. A pool worker started its own, so every run paid that again for each worker, however
many runs one process made (a TA's session in a notebook, the soak, a test suite). Here the
process that makes the pool starts the parents itself, one per worker, and keeps them when the run
ends; the next run's workers are lent the same ones, their imports done.

What a worker may assume stays as it was: while a run lasts, each worker has a parent of its own
that no other process asks anything. What changes is who ends a parent. It is a child of the
coordinator, so a worker's death no longer takes its parent (and the kernels in the parent's box)
with it; the coordinator ends every parent of a run whose pool broke, before anything else is
graded, and ends a parent that does not answer in turn when it comes back. A parent a worker
ended itself (`discard_zygote`, before a try on a fresh one) is found dead and forgotten.
"""

from __future__ import annotations

import dataclasses
import os
import threading

from gradekit.core.failures import GraderFailure
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.grading import worker_box
from gradekit.grading.warm_kernels import Zygote, adopt, start_zygote

MOST_LENT = 255  # one byte names a worker's parent

# Process-wide: this process's idle parents, between its runs; and the lock of the runs that take and give them back.
_kept: list[Zygote] = []
_keeping = threading.Lock()


@dataclasses.dataclass(frozen=True)
class Loan:
    """Warm parents lent to one pool's workers: each worker takes one byte of `slots`, the index of its own."""

    parents: tuple[Zygote, ...]
    slots: int  # the read end of a pipe holding one byte per parent

    def take(self) -> None:
        """A worker's start: adopt the next parent no other worker took (none when they are all taken)."""
        slot = os.read(self.slots, 1)
        if slot:
            adopt(self.parents[slot[0]])


def lend(count: int, allow_unconfined: bool) -> Loan | None:
    """Up to `count` parents for a pool about to fork its workers: kept ones first, the rest started now.

    Those started now are not waited for: each worker waits for its own, as it would for one it
    started. Where no parent can start here (no box, and the run does not allow grading without
    it), nothing is lent and each worker meets that refusal itself, as the run's rows must say.
    """
    try:
        boxed = worker_box.require(allow_unconfined)
    except GraderFailure:
        return None
    with _keeping:
        parents = [parent for parent in _kept if parent.boxed == boxed][: min(count, MOST_LENT)]
        for parent in parents:
            _kept.remove(parent)
    environment = grading_environment()  # what a worker grades in: it makes the parent's own environment
    while len(parents) < min(count, MOST_LENT):
        try:
            parents.append(start_zygote(boxed, environment, wait=False))
        except GraderFailure:
            break  # a worker without one starts its own, and meets the failure there
    read_end, write_end = os.pipe()
    os.write(write_end, bytes(range(len(parents))))
    os.close(write_end)
    return Loan(tuple(parents), read_end)


def give_back(loan: Loan | None, pool_broke: bool) -> None:
    """The end of a run: its parents are kept for the next, unless its pool broke or they fell out of step.

    A worker lost mid-run left its kernel in its parent's box, and perhaps half a request in its
    parent's pipe: after a break every parent of the run is ended, and with it whatever its box held.
    """
    if loan is None:
        return
    os.close(loan.slots)
    for parent in loan.parents:
        if not pool_broke and parent.back_in_step():
            with _keeping:
                _kept.append(parent)
        else:
            parent.kill()


def end_kept() -> None:
    """End every parent this process keeps (a soak's runs are over: nothing of grading may be left running)."""
    with _keeping:
        ending, _kept[:] = list(_kept), []
    for parent in ending:
        parent.kill()
