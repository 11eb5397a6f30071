"""Warm parents a process keeps from one grading run to the next, lent to each run's pool workers.

A warm parent (warm_kernels.Zygote) costs about two seconds of CPU to start: it imports torch and
ipykernel. A pool worker started its own, so every run paid that again for each worker, however
many runs one process made (a TA's session in a notebook, the soak, a test suite). Here the
process that makes the pool starts the parents itself, one per worker, and keeps them when the run
ends; the next run's workers are lent the same ones, their imports done.

What a worker may assume stays as it was: while a run lasts, each worker has a parent of its own
that no other process asks anything, and its budget's clock counts the parent's kernels as its own
(task_budget.py). What changes is who ends a parent. It is a child of the coordinator, so a
worker's death no longer takes its parent (and the kernels in its box) with it: the coordinator
ends every parent of a run that did not end whole (its pool broke, or the run raised), and a
parent that comes back out of step or with a kernel still running. A parent a worker ended itself
(`discard_zygote`, before a try on a fresh one) is found dead and forgotten.

Only boxed parents are kept (an unboxed kernel shares its parent's user namespace), only by a
process's main thread (bubblewrap ends a parent when the thread that started it ends), and at
most `MOST_KEPT` at a time; the rest end with their run, as before.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import shutil
import threading
import time
import uuid

from gradekit.core.failures import GraderFailure
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.grading import worker_box
from gradekit.grading.warm_kernels import Zygote, adopt, start_zygote

MOST_KEPT = 4  # idle parents a process holds between runs (each a few hundred MB of memory)
MOST_LENT = 255  # one byte names a worker's parent
STALE_LINES = 2  # what a lent parent's pipe may hold unread when it comes back: its first line and one reply
IN_STEP_SECONDS = 30.0  # how long a parent back from its run may take to answer (one never used may still import)

# Process-wide: this process's idle parents, between its runs; and the lock of the runs that take and give them back.
_kept: list[Zygote] = []
_keeping = threading.Lock()


def _forget_in_child() -> None:
    """A forked process keeps none of its parent's parents: they are its parent's to lend and to end."""
    global _keeping
    _kept.clear()
    _keeping = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


@dataclasses.dataclass(frozen=True)
class Loan:
    """Warm parents lent to one pool's workers: each worker takes one byte of `slots`, the index of its own."""

    parents: tuple[Zygote, ...]
    slots: int  # the read end of a pipe holding one byte per parent, read without waiting

    def take(self) -> None:
        """A worker's start: adopt the next parent no other worker took (none when they are all taken)."""
        try:
            slot = os.read(self.slots, 1)
        except BlockingIOError:  # another thread's pool, forked meanwhile, holds the pipe's other end
            return
        if slot:
            adopt(self.parents[slot[0]])


def lend(count: int, allow_unconfined: bool) -> Loan | None:
    """Up to `count` parents for a pool about to fork its workers: kept ones first, the rest started now.

    Those started now are not waited for: each worker waits for its own, as it would for one it
    started. Nothing is lent off the main thread, or where parents are not boxed (no box here,
    whether or not the run allows grading without it): each worker then starts its own and meets
    any refusal itself, as the run's rows must say.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        if not worker_box.require(allow_unconfined):
            return None
    except GraderFailure:
        return None
    count = min(count, MOST_LENT)
    parents = _taken(count)
    try:
        environment = grading_environment()  # what a worker grades in: it makes the parent's own environment
        while len(parents) < count:
            try:
                parents.append(start_zygote(True, environment, wait=False))
            except GraderFailure:
                break  # a worker without one starts its own, and meets the failure there
        read_end, write_end = os.pipe()
    except BaseException:  # nothing taken or started here may be left without its ending
        for parent in parents:
            parent.kill()
        raise
    os.write(write_end, bytes(range(len(parents))))
    os.close(write_end)
    os.set_blocking(read_end, False)
    return Loan(tuple(parents), read_end)


def _taken(count: int) -> list[Zygote]:
    """Up to `count` kept parents that still run; one that died between runs is ended here."""
    with _keeping:
        taken, _kept[:] = _kept[:count], _kept[count:]
    alive = [parent for parent in taken if parent.running()]
    for parent in taken:
        if parent not in alive:
            parent.kill()
    return alive


def give_back(loan: Loan | None, ended_whole: bool) -> None:
    """The end of a run: its parents are kept for the next, unless the run did not end whole or they fell out of step.

    A worker lost mid-run left its kernel in its parent's box, and perhaps half a request in its
    parent's pipe: then every parent of the run is ended, and with it whatever its box held.
    """
    if loan is None:
        return
    os.close(loan.slots)
    waiting = list(loan.parents)
    try:
        while waiting:
            parent = waiting[0]
            if ended_whole and _room() and back_in_step(parent) and _keep(parent):
                waiting.pop(0)
                continue
            waiting.pop(0).kill()
    finally:  # interrupted: what is left is ended, never kept unchecked
        for parent in waiting:
            parent.kill()


def end_loan(loan: Loan | None) -> None:
    """End every parent of `loan` now (a worker of its pool was lost); `give_back` then finds them ended."""
    for parent in loan.parents if loan is not None else ():
        parent.kill()


def _room() -> bool:
    with _keeping:
        return len(_kept) < MOST_KEPT


def _keep(parent: Zygote) -> bool:
    with _keeping:
        if len(_kept) >= MOST_KEPT:
            return False
        _kept.append(parent)
        return True


def end_kept() -> None:
    """End every parent this process keeps (a soak's runs are over: nothing of grading may be left running)."""
    with _keeping:
        ending, _kept[:] = list(_kept), []
    for parent in ending:
        parent.kill()


def back_in_step(parent: Zygote) -> bool:
    """Whether `parent`, back from the run it was lent to, answers in turn and runs no kernel; it kills what kernels left.

    What the worker left unread in the pipe (the first line saying the parent is ready, a reply it
    died before reading) is passed over up to this request's own reply, known by its token. A
    parent that does not answer within `IN_STEP_SECONDS` is out of step.
    """
    if not parent.running():
        return False
    token = uuid.uuid4().hex
    try:
        with parent.lock:
            parent.send({"clear": True, "echo": token})
            reply = _reply_to(parent, token)
    except (OSError, ValueError):
        return False
    if reply is None or reply.get("live") != 0 or not parent.kernels_root.is_dir():
        return False
    parent.ready = True  # its first line, if still unread, was passed over above
    # What its kernels left in their folders (a guarded kernel's is removed once its log is read) is not the next run's.
    for folder in parent.kernels_root.iterdir():
        shutil.rmtree(folder, ignore_errors=True)
    return True


def _reply_to(parent: Zygote, token: str) -> dict | None:
    """The reply carrying `token`, read straight from the pipe (never past it), or None when it does not come in time."""
    assert parent.process.stdout is not None  # opened as a pipe
    pipe = parent.process.stdout.fileno()
    waiting = select.poll()  # not select.select, which refuses a descriptor past 1023
    waiting.register(pipe, select.POLLIN)
    deadline = time.monotonic() + IN_STEP_SECONDS
    unread = b""
    for _ in range(STALE_LINES + 1):
        while b"\n" not in unread:
            left = deadline - time.monotonic()
            if left <= 0 or not waiting.poll(left * 1000):
                return None
            chunk = os.read(pipe, 65536)
            if not chunk:
                return None
            unread += chunk
        line, unread = unread.split(b"\n", 1)
        reply = json.loads(line)
        if reply.get("echo") == token:
            return reply if not unread else None
    return None
