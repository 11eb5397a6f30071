"""The suite's own timing figure: each test's wall and CPU seconds, summed by tier, written as Markdown.

pytest's `--durations` prints wall time only, which follows the machine's load. CPU time (the
test process and every process it waited for) says what the work costs, and with both the
figure states the least wall time a split of the suite among a machine's cores could reach.
`python -m pytest --durations-figures PATH` writes it (tests/conftest.py registers the option).
"""

from __future__ import annotations

import dataclasses
import os
import resource
import time
from pathlib import Path

import pytest

from gradekit.commands.figures import markdown_table, seconds_text

SLOWEST = 30


@dataclasses.dataclass(frozen=True)
class TimedTest:
    """One test's set-up, call and teardown: wall and CPU seconds."""

    nodeid: str
    tier: str
    wall: float
    cpu: float


def cpu_seconds() -> float:
    """User and system seconds of this process and of the processes it has waited for."""
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


class DurationsFigure:
    """A pytest plugin that times every test and writes the figure when the session ends."""

    def __init__(self, path: Path, tiers: tuple[str, ...]):
        self.path, self.tiers = path, tiers
        self.times: list[TimedTest] = []
        self.loads: list[float] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        wall, cpu = time.monotonic(), cpu_seconds()
        try:
            return (yield)
        finally:
            tier = next((mark.name for mark in item.iter_markers() if mark.name in self.tiers), "none")
            self.times.append(TimedTest(item.nodeid, tier, time.monotonic() - wall, cpu_seconds() - cpu))
            self.loads.append(os.getloadavg()[0])

    def pytest_sessionfinish(self, session):
        if self.times:
            mean_load = sum(self.loads) / len(self.loads)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(render(self.times, self.tiers, os.cpu_count() or 1, mean_load, self.path))


def render(times: list[TimedTest], tiers: tuple[str, ...], cores: int, mean_load: float, path: Path) -> str:
    """The figure's Markdown: totals, one row per tier, the least wall time on `cores`, the slowest tests."""
    wall, cpu = sum(t.wall for t in times), sum(t.cpu for t in times)
    longest = max(times, key=lambda t: t.wall)
    floor = max(cpu / cores, longest.wall)
    tier_rows = [_tier_row(tier, [t for t in times if t.tier == tier]) for tier in tiers]
    slowest_rows = [[f"{t.wall:.1f} s", f"{t.cpu:.1f} s", t.tier, f"`{t.nodeid}`"] for t in _slowest(times)]
    lines = [
        f"<!-- written by: python -m pytest --durations-figures {path.as_posix()} -->",
        "",
        f"{len(times):,} tests in {seconds_text(wall)} wall and {seconds_text(cpu)} of CPU; {cores} cores, "
        f"load {mean_load:.1f} on average at the tests' ends.",
        "",
        markdown_table(["tier", "tests", "wall", "CPU", "CPU / wall"], [*tier_rows, _tier_row("**all**", times)]),
        "",
        f"However the tests were split among {cores} cores, the run could not take less than the larger of "
        f"its CPU time over the cores ({seconds_text(cpu / cores)}) and its longest test ({longest.wall:.0f} s): "
        f"**{seconds_text(floor)}**. CPU time counts the processes a test waited for, not a server that "
        "outlives its starter (PostgreSQL's, the browser's).",
        "",
        f"The {SLOWEST} slowest tests (a session fixture counts in the first test that asks for it):",
        "",
        markdown_table(["wall", "CPU", "tier", "test"], slowest_rows),
    ]
    return "\n".join(lines) + "\n"


def _tier_row(tier: str, times: list[TimedTest]) -> list[str]:
    wall, cpu = sum(t.wall for t in times), sum(t.cpu for t in times)
    ratio = f"{cpu / wall:.2f}" if wall else "-"
    return [tier, f"{len(times):,}", seconds_text(wall), seconds_text(cpu), ratio]


def _slowest(times: list[TimedTest]) -> list[TimedTest]:
    return sorted(times, key=lambda t: t.wall, reverse=True)[:SLOWEST]
