"""The start of a forked grading worker: an event loop of its own, whatever its parent left behind.

Workers are forked (they start with nbgrader already imported), and a fork copies the
parent's thread as it stands: jupyter_core keeps the loop that drives kernel calls in a
context variable, asyncio keeps one per thread. A coordinator that had run a kernel itself
(a test does) therefore handed its workers a copy of its loop, whose selector the two
processes share: a worker driving it waited for ever on events that went to the parent.
A coordinator forking from inside a running loop (the pre-check service) hands over a loop
that still counts as running, which the worker can neither drive nor close.

So a worker's process runs in an empty context (no inherited slot in jupyter_core) and
makes its own loop before anything else: the parent's loop is never touched.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from multiprocessing.context import ForkContext, ForkProcess
from typing import TypeVar

from jupyter_core.utils import ensure_event_loop

Result = TypeVar("Result")


def run_in_own_loop(function: Callable[..., Result], *args: object) -> Result:
    """`function(*args)` in an empty context, under a new event loop: the first thing a forked worker does."""
    return contextvars.Context().run(_with_own_loop, function, *args)


def _with_own_loop(function: Callable[..., Result], *args: object) -> Result:
    ensure_event_loop()  # in an empty context: a new loop, made asyncio's current one too
    return function(*args)


class _WorkerProcess(ForkProcess):
    """A forked process whose target runs in a fresh context, under a new event loop."""

    def run(self) -> None:
        run_in_own_loop(super().run)


class _WorkerContext(ForkContext):
    Process = _WorkerProcess


def worker_context() -> ForkContext:
    """The multiprocessing context for grading pools: forked workers, each with an event loop of its own."""
    return _WorkerContext()
