"""Where the benchmark's grading time went: each phase over the cohort, per notebook, and its share.

The engine's time is what its workers and its coordinator spent on the cohort
(worker-seconds, not the wall clock of a parallel run), as the phase clock
(grading/phase_clock.py) measured it where the work happened, plus the
feedback pages made afterwards. It is set beside the in-process floor: the
seconds a notebook's cells take in a kernel already started.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from gradekit.grading.phase_clock import Phase, PhaseTimes


@dataclasses.dataclass(frozen=True)
class PhaseTable:
    """The cohort's phases, how many notebooks they graded, and the floor per notebook."""

    times: PhaseTimes
    notebooks: int
    floor_per_notebook: float

    @classmethod
    def of(cls, submissions: Iterable[PhaseTimes], notebooks: int, floors: dict[str, float]) -> PhaseTable:
        total = PhaseTimes()
        for times in submissions:
            total = total.plus(times)
        return cls(total, notebooks, sum(floors.values()) / max(len(floors), 1))

    @property
    def engine_seconds(self) -> float:
        return self.times.total

    @property
    def per_notebook(self) -> float:
        return self.engine_seconds / max(self.notebooks, 1)

    @property
    def floor_ratio(self) -> float:
        """Engine time per notebook over the floor per notebook (the target: within 3x)."""
        return self.per_notebook / self.floor_per_notebook if self.floor_per_notebook else float("inf")

    def rows(self) -> list[tuple[Phase, float, float, float]]:
        """(phase, seconds over the cohort, mean per notebook, share of engine time) for each phase timed, in order."""
        engine, notebooks = self.engine_seconds or 1.0, max(self.notebooks, 1)
        return [
            (phase, self.times.of(phase), self.times.of(phase) / notebooks, self.times.of(phase) / engine)
            for phase in self.times
        ]


def phase_lines(table: PhaseTable) -> list[str]:
    """The table as the command prints it."""
    width = max(len(phase.value) for phase in Phase)
    lines = [f"where the engine's time went ({table.notebooks} notebooks; seconds of a worker or the coordinator):"]
    lines += [f"  {'phase':<{width}}  {'total':>8}  {'per notebook':>12}  {'share':>6}"]
    for phase, seconds, mean, share in table.rows():
        lines.append(f"  {phase.value:<{width}}  {seconds:7.1f}s  {mean:11.3f}s  {share:6.1%}")
    lines.append(
        f"  {'engine, all phases':<{width}}  {table.engine_seconds:7.1f}s  {table.per_notebook:11.3f}s  100.0%"
    )
    lines.append(
        f"engine per notebook {table.per_notebook:.2f} s, floor per notebook {table.floor_per_notebook:.2f} s:"
        f" {table.floor_ratio:.2f}x the floor (target: within 3x)"
    )
    return lines
