"""A warm grading process forked by hand, each task under its budget: for a process multiprocessing will not fork.

A Dask worker under its nanny is a daemonic process, and multiprocessing
refuses children to those, so a cluster worker cannot keep a process pool the
way this machine's coordinator does. It forks one with `os.fork` instead: the
child starts in an empty context with an event loop of its own
(forked_workers.py), keeps its grader between tasks, and runs each task under
`within_budget`. The budget's watchdog kills only the child, and the worker's
thread, which waits on the child rather than grading itself, is free at once.

A child holds only its own files: its temporary files and kernel folders go
under a folder the parent names and the child makes (`start` says where), which
`close` removes. The child makes it, not the parent: a parent killed between
making it and forking (a lost cluster worker, killed as its task began) left it
behind with nobody to remove it; a child whose parent is gone removes its own.
"""

from __future__ import annotations

import multiprocessing
import os
import secrets
import shutil
import signal
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Generic, TypeVar

from gradekit.grading.cpu_clock import POLL_SECONDS
from gradekit.grading.forked_workers import run_in_own_loop
from gradekit.grading.task_budget import OverBudget, TaskBudget, ended_by_timer, over_budget, within_budget
from gradekit.grading.warm_kernels import discard_zygote

Result = TypeVar("Result")

# Threads of one process may fork at once: a child must not inherit another child's end of a pipe,
# or that pipe would stay open after its own child died.
_FORKING = threading.Lock()
# Seconds a child that was asked to stop may take before it is killed.
STOP_SECONDS = 5
# Tries at removing a child's folder while processes it started are still ending and writing into it.
REMOVE_TRIES = 10
REMOVE_PAUSE_SECONDS = 0.2
# Every child of this process, so that a later child can close the pipes of the earlier ones: a child must
# see its own pipe close when this process goes away, which a sibling holding its parent's end would prevent.
_children: weakref.WeakSet[ForkedGrader] = weakref.WeakSet()


class GradingProcessLost(Exception):
    """The forked grading process died for no reason of its budget's (the grader's failure, tried again)."""


class ForkedGrader(Generic[Result]):
    """One forked grading process running `task`, one call at a time; `start(folder)` is the first thing it does."""

    def __init__(self, task: Callable[..., Result], start: Callable[[str], None]):
        self.folder = Path(tempfile.gettempdir()) / f"gradekit-run-{secrets.token_hex(8)}"  # made by the child
        self.calls = 0
        self.exit_status: int | None = None
        self.connection: Connection
        with _FORKING:  # the pipe too: a sibling forked in between would hold both its ends
            ours, theirs = multiprocessing.Pipe()
            try:
                pid = os.fork()
            except OSError as error:  # no process to be had (the machine's or the group's task limit)
                for end in (ours, theirs):
                    end.close()
                raise GradingProcessLost(f"no grading process could be forked: {error}") from error
            if pid == 0:
                for sibling in (ours, *(child.connection for child in _children)):
                    sibling.close()
                _child(theirs, task, start, str(self.folder))
            theirs.close()
            self.pid, self.connection = pid, ours
            _children.add(self)

    @property
    def alive(self) -> bool:
        return not self._exited()

    def run(self, budget: TaskBudget, *args: object) -> Result | OverBudget:
        """`task(*args)` in the child under `budget`; the verdict that ended the child if it passed it.

        A child that died otherwise raises `GradingProcessLost`; a task that raised raises the same here.
        """
        verdict = self.folder / f"over-budget-{self.calls}.json"
        self.calls += 1
        started = time.monotonic()
        try:
            self.connection.send((budget, str(verdict), args))
            error, value = self._reply()
        except (EOFError, OSError) as error:
            self._reap()
            ended = over_budget(verdict) or ended_by_timer(time.monotonic() - started, budget)
            if ended is None:
                raise GradingProcessLost(f"the grading process ended (wait status {self.exit_status})") from error
            return ended
        if error is not None:
            raise error
        return value

    def _reply(self) -> tuple[BaseException | None, Result]:
        """The child's answer, or EOFError once the child has died without one."""
        while not self.connection.poll(POLL_SECONDS):
            if self._exited() and not self.connection.poll(0):
                raise EOFError("the grading process exited")
        return self.connection.recv()

    def _exited(self) -> bool:
        if self.exit_status is not None:
            return True
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere: gone all the same
            pid, status = self.pid, -1
        if pid:
            self.exit_status = status
        return bool(pid)

    def _reap(self) -> None:
        """Wait for a child whose pipe closed: it is dead or about to be."""
        deadline = time.monotonic() + STOP_SECONDS
        while not self._exited() and time.monotonic() < deadline:
            time.sleep(0.05)

    def close(self, remove_kernel_folders: Callable[[str], None]) -> None:
        """Stop the child (its end of the pipe closes: it ends its zygote and exits), then remove its files."""
        self.connection.close()
        self._reap()
        if not self._exited():
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.exit_status = -signal.SIGKILL
        remove_folder(self.folder)
        remove_kernel_folders(str(self.folder))


def remove_folder(folder: Path) -> None:
    """Remove `folder`; again, for a while, if a kernel of the child that is still ending wrote into it meanwhile."""
    for _ in range(REMOVE_TRIES):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        time.sleep(REMOVE_PAUSE_SECONDS)


def _child(connection: Connection, task: Callable, start: Callable[[str], None], folder: str) -> None:
    """The forked process: serve calls until the parent closes its end, then exit without the parent's exit handlers."""
    code = 1
    try:
        # The parent's handlers, and the descriptor through which signals wake its event loop, are the parent's.
        signal.set_wakeup_fd(-1)
        for handled in (signal.SIGTERM, signal.SIGINT):
            signal.signal(handled, signal.SIG_DFL)
        run_in_own_loop(_serve, connection, task, start, folder)
        code = 0
    finally:
        os._exit(code)


def _serve(connection: Connection, task: Callable, start: Callable[[str], None], folder: str) -> None:
    """Calls until the parent's end closes; then, the parent being perhaps dead, the child removes its own files."""
    os.mkdir(folder, mode=0o700)  # a name taken already is a failed start: the parent hears the pipe close
    start(folder)
    try:
        while True:
            try:
                budget, verdict, args = connection.recv()
            except EOFError:
                return
            try:
                reply: tuple[Exception | None, object] = (None, within_budget(budget, verdict, task, *args))
            except Exception as error:
                reply = (error, None)
            try:
                connection.send(reply)
            except OSError:  # the parent is gone: nobody waits for this reply
                return
    finally:
        discard_zygote()
        remove_folder(Path(folder))  # its scratch course holds the hidden tests
