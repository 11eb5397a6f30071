"""Where a submission's grading time goes: one timeline, charged to the phase that is running.

Grading one notebook is sequential even where it crosses threads (the event
loop waits for the sealed test cell's thread, which waits for the loop to
bring the kernel's answer), so one stack of phases describes it: entering a
phase charges the time so far to the phase it interrupts, leaving it charges
its own time and resumes the one below. Time in no named phase is `OTHER`, so
a submission's phases add up to its wall time by construction.

The clock travels with the run's sink (run_sink.py) to the steps that do the
work; the scratch grader restarts it per submission and hands its times back
with the outcome.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import threading
import time
from collections.abc import Iterator, Mapping


class Phase(enum.Enum):
    """A part of grading, by what a person would call it; the value is its label."""

    WORKER_START = "worker start (nbgrader loaded, scratch course)"
    BOX_START = "box start (the warm parent and its box)"
    KERNEL_START = "kernel start (fork, sockets, first reply)"
    ANSWER_CELLS = "answer and other cells in the kernel"
    TEST_CELLS = "test cells: the checks, on the grader's side"
    SEALED_KERNEL = "sealed calls: the kernel's answer"
    SEALED_WIRE = "sealed calls: the wire (mailbox, message, hand-over)"
    GUARD = "guard: arming and probes"
    KERNEL_STOP = "kernel shutdown"
    EXECUTE = "Execute step's own (between cells, findings)"
    NBGRADER = "nbgrader's other steps (sanitizing, limits, set-up, files)"
    GRADEBOOK = "gradebook writes and reads"
    FEEDBACK = "feedback pages"
    OTHER = "other (intake, scratch course, unaccounted)"


@dataclasses.dataclass(frozen=True)
class PhaseTimes:
    """Seconds per phase of one submission (or of a whole cohort, once added up)."""

    seconds: Mapping[Phase, float] = dataclasses.field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def of(self, phase: Phase) -> float:
        return self.seconds.get(phase, 0.0)

    def plus(self, other: PhaseTimes) -> PhaseTimes:
        return PhaseTimes({phase: self.of(phase) + other.of(phase) for phase in Phase if phase in {*self, *other}})

    def with_phase(self, phase: Phase, seconds: float) -> PhaseTimes:
        """These times with `seconds` more of `phase` (spent outside the clock, such as the coordinator's)."""
        return self.plus(PhaseTimes({phase: seconds}))

    def __iter__(self) -> Iterator[Phase]:
        return iter(self.seconds)


class PhaseClock:
    """The running timeline of one submission's grading; safe to enter from the sealed test cell's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.restart()

    def restart(self) -> None:
        with self._lock:
            self._spent: dict[Phase, float] = {}
            self._stack = [Phase.OTHER]
            self._since = time.monotonic()

    @contextlib.contextmanager
    def phase(self, phase: Phase) -> Iterator[None]:
        """Charge the time inside to `phase`, less what a phase entered within it takes."""
        with self._lock:
            self._charge()
            depth = len(self._stack)
            self._stack.append(phase)
        try:
            yield
        finally:
            with self._lock:
                self._charge()
                del self._stack[depth:]  # whatever was entered within and not left goes too

    @property
    def running(self) -> Phase:
        """The phase the clock charges now."""
        with self._lock:
            return self._stack[-1]

    def move(self, seconds: float, source: Phase, target: Phase) -> None:
        """Charge `seconds` already spent in `source` to `target` (what only a lower layer could tell apart)."""
        with self._lock:
            moved = min(seconds, self._spent.get(source, 0.0))
            self._spent[source] = self._spent.get(source, 0.0) - moved
            self._spent[target] = self._spent.get(target, 0.0) + moved

    def times(self) -> PhaseTimes:
        """The phases so far, the running one included up to now."""
        with self._lock:
            self._charge()
            return PhaseTimes(dict(self._spent))

    def _charge(self) -> None:
        now = time.monotonic()
        running = self._stack[-1]
        self._spent[running] = self._spent.get(running, 0.0) + now - self._since
        self._since = now
