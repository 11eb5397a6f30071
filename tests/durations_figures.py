"""The suite's own timing figure: each test's wall and CPU seconds, summed by tier, written as Markdown.

pytest's `--durations` prints wall time only, which follows the machine's load. CPU time (the
test process and every process it waited for) says what the work costs, and with both the
figure states the least wall time a split of the suite among a machine's cores could reach,
beside the time the run took from start to end.
`python -m pytest --durations-figures PATH` writes it (tests/conftest.py registers the option).

Run on several workers (pytest-xdist), a test runs in a worker's process while the figure is
written by the controller: `PhaseClock`, where the test runs, stamps each phase's CPU seconds on
its report, and `DurationsFigure`, where the reports arrive, adds them up. Run in one process,
both are the same process. `make test` runs the suite in two passes (the tests marked `alone`
after the others, by themselves): the second, given `--durations-after`, reads what the first
recorded beside the figure and writes one figure for both.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import math
import os
import resource
import time
from pathlib import Path

import pytest

from gradekit.commands.figures import markdown_table, seconds_text
from gradekit.core.process_readings import machine_busy_seconds, machine_stolen_seconds

SLOWEST = 30
CPU_STAMP = "cpu-seconds"  # the user property each phase's CPU seconds travel in
# A fixed piece of work is timed on every core at once as each pass begins, best of these rounds: the
# CPU seconds it takes say how fast the machine's cores ran then, loaded as the tests load them. The
# same tests took a fifth more CPU in one run than in another an hour before: this says whether the
# machine had changed.
REFERENCE_ROUNDS = 3
REFERENCE_STUDENTS = 60_000


@dataclasses.dataclass(frozen=True)
class TimedTest:
    """One test's set-up, call and teardown: wall and CPU seconds."""

    nodeid: str
    tier: str
    wall: float
    cpu: float


@dataclasses.dataclass(frozen=True)
class SuiteRun:
    """One pass of the suite: on how many workers (0: in pytest's own process), its seconds from start to
    end, the seconds the machine's cores were busy meanwhile (whoever's work: servers included), and the
    seconds the host of a virtual machine gave its cores to others meanwhile (the run was that much slowed),
    and how fast the machine was as it began (`reference_seconds`)."""

    workers: int
    elapsed: float
    busy: float = 0.0
    stolen: float = 0.0
    reference: float = 0.0  # CPU seconds of the reference work as the pass began (0: not timed)


def cpu_seconds() -> float:
    """User and system seconds of this process and of the processes it has waited for."""
    own, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


def reference_seconds(rounds: int = REFERENCE_ROUNDS, cores: int = 0) -> float:
    """CPU seconds of the reference work with every core doing it at once (`cores`: the machine's), as the
    tests load them: the mean of each core's fewest, of `rounds` tries. Two jobs on one core's two
    hardware threads, or beside a neighbour's, each take longer than one alone."""
    cores = cores or os.cpu_count() or 1
    children = []
    for _ in range(cores):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child's own side)
            try:  # whatever happens, the child never returns into the parent's pytest run
                os.close(read)
                os.write(write, repr(best_round(rounds)).encode())
            finally:
                os._exit(0)
        os.close(write)
        children.append((pid, read))
    seconds = []
    for pid, read in children:
        with os.fdopen(read) as said:
            seconds.append(float(said.read()))
        os.waitpid(pid, 0)
    return sum(seconds) / len(seconds)


def best_round(rounds: int) -> float:
    """The fewest CPU seconds this process took for the reference work, of `rounds` tries after a first one."""
    best, collecting = math.inf, gc.isenabled()
    gc.disable()  # a collection's cost depends on everything else this process holds
    try:
        _reference_work()  # untimed: the first round also grows the process's heap
        for _ in range(rounds):
            start = time.process_time()
            _reference_work()
            best = min(best, time.process_time() - start)
    finally:
        if collecting:
            gc.enable()
    return best


def _reference_work() -> None:
    """What the kit's own processes do most: make many small objects, write and read JSON, sort, hash."""
    rows = [{"student": f"s{n:05d}", "scores": [n % 7, n % 11, n % 13]} for n in range(REFERENCE_STUDENTS)]
    text = json.dumps(rows)
    json.loads(text).sort(key=lambda row: (row["scores"][2], row["student"]))
    hashlib.sha256(text.encode()).digest()


class PhaseClock:
    """A pytest plugin, where tests run: each phase's CPU seconds go on its report, as a user property."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item):
        return (yield from _stamped(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        return (yield from _stamped(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item, nextitem):
        return (yield from _stamped(item))


def _stamped(item):
    """Around one phase: its CPU seconds appended to the item's user properties, which its report copies."""
    start = cpu_seconds()
    try:
        return (yield)
    finally:
        item.user_properties.append((CPU_STAMP, cpu_seconds() - start))


@dataclasses.dataclass
class Recorded:
    """What a figure holds before it is written: every test, the load at each test's end, each pass of the run."""

    times: list[TimedTest] = dataclasses.field(default_factory=list)
    loads: list[float] = dataclasses.field(default_factory=list)
    passes: list[SuiteRun] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "wall seconds by test module": module_seconds(self.times),
            "tests": [dataclasses.astuple(t) for t in self.times],
            "loads": [round(load, 2) for load in self.loads],
            "passes": [dataclasses.astuple(run) for run in self.passes],
        }

    @classmethod
    def read(cls, path: Path) -> Recorded:
        """The earlier pass's record; a clear error when there is none, rather than a figure of half the suite."""
        try:
            data = json.loads(path.read_text())
            return cls(
                [TimedTest(*test) for test in data["tests"]],
                list(data["loads"]),
                [SuiteRun(*run) for run in data["passes"]],
            )
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise pytest.UsageError(f"--durations-after: no earlier pass recorded in {path}: {error}") from error


class DurationsFigure:
    """A pytest plugin, where reports arrive: times every test from its reports and writes the figure at the end.

    `reference`: the seconds `reference_seconds` took as the pass began (0: not timed).
    """

    def __init__(
        self,
        path: Path,
        tiers: tuple[str, ...],
        workers: int = 0,
        earlier: Recorded | None = None,
        reference: float = 0.0,
    ):
        self.path, self.tiers, self.workers, self.reference = path, tiers, workers, reference
        self.recorded = earlier or Recorded()
        self.walls: dict[str, float] = {}
        self.started, self.busy_at_start = time.monotonic(), machine_busy_seconds()
        self.stolen_at_start = machine_stolen_seconds()

    @property
    def times(self) -> list[TimedTest]:
        return self.recorded.times

    def pytest_runtest_logreport(self, report):
        self.walls[report.nodeid] = self.walls.get(report.nodeid, 0.0) + report.duration
        if report.when != "teardown":
            return
        cpu = sum(value for name, value in report.user_properties if name == CPU_STAMP)
        tier = next((name for name in self.tiers if name in report.keywords), "none")
        self.times.append(TimedTest(report.nodeid, tier, self.walls.pop(report.nodeid), cpu))
        self.recorded.loads.append(os.getloadavg()[0])

    def pytest_sessionfinish(self, session):
        elapsed, busy = time.monotonic() - self.started, machine_busy_seconds() - self.busy_at_start
        stolen = machine_stolen_seconds() - self.stolen_at_start
        self.recorded.passes.append(SuiteRun(self.workers, elapsed, busy, stolen, self.reference))
        if self.times:
            recorded = self.recorded
            mean_load = sum(recorded.loads) / len(recorded.loads)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            figure = render(self.times, self.tiers, os.cpu_count() or 1, mean_load, self.path, recorded.passes)
            self.path.write_text(figure)
            record_path(self.path).write_text(json.dumps(recorded.to_json(), indent=1) + "\n")


def record_path(figure: Path) -> Path:
    """Where a figure's record goes: beside it, as JSON (a later pass adds to it; the next run's groups are weighed by it)."""
    return figure.with_suffix(".json")


def module_seconds(times: list[TimedTest]) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for timed in times:
        module = timed.nodeid.split("::", 1)[0]
        seconds[module] = seconds.get(module, 0.0) + timed.wall
    return {module: round(value, 1) for module, value in sorted(seconds.items())}


def render(
    times: list[TimedTest], tiers: tuple[str, ...], cores: int, mean_load: float, path: Path, passes: list[SuiteRun]
) -> str:
    """The figure's Markdown: totals, one row per tier, the least wall time on `cores`, the slowest tests."""
    wall, cpu = sum(t.wall for t in times), sum(t.cpu for t in times)
    longest = max(times, key=lambda t: t.wall)
    floor = max(cpu / cores, longest.wall)
    tier_rows = [_tier_row(tier, [t for t in times if t.tier == tier]) for tier in tiers]
    slowest_rows = [[f"{t.wall:.1f} s", f"{t.cpu:.1f} s", t.tier, f"`{t.nodeid}`"] for t in _slowest(times)]
    lines = [
        f"<!-- written by: python -m pytest --durations-figures {path.as_posix()} -->",
        "",
        f"{len(times):,} tests in {seconds_text(wall)} of test wall time and {seconds_text(cpu)} of CPU; "
        f"{cores} cores, load {mean_load:.1f} on average at the tests' ends. {_elapsed_text(passes, cores)}"
        + _reference_text(passes),
        "",
        markdown_table(["tier", "tests", "wall", "CPU", "CPU / wall"], [*tier_rows, _tier_row("**all**", times)]),
        "",
        f"However the tests were split among {cores} cores, the run could not take less than the larger of "
        f"the tests' CPU time over the cores ({seconds_text(cpu / cores)}) and its longest test "
        f"({longest.wall:.0f} s): **{seconds_text(floor)}**. That is a floor and an optimistic one: the tests' "
        "CPU counts the processes a test waited for, not a server that outlives its starter (PostgreSQL's, "
        "the browser's) nor a process killed rather than waited for; the machine's busy time counts both.",
        "",
        f"The {SLOWEST} slowest tests (a session fixture counts in the first test that asks for it):",
        "",
        markdown_table(["wall", "CPU", "tier", "test"], slowest_rows),
    ]
    return "\n".join(lines) + "\n"


def _elapsed_text(passes: list[SuiteRun], cores: int) -> str:
    elapsed, busy = sum(run.elapsed for run in passes), sum(run.busy for run in passes)
    if len(passes) == 1:
        took = f"The run took **{seconds_text(elapsed)}** from start to end, {_where(passes[0])}"
    else:
        parts = [f"{seconds_text(run.elapsed)} {_where(run)}" for run in passes]
        took = f"The run took **{seconds_text(elapsed)}** from start to end: " + ", then ".join(parts)
    if not busy:
        return took + "."
    stolen = sum(run.stolen for run in passes)
    taken = (
        f", and the host of this virtual machine gave {seconds_text(stolen)} of them to others "
        f"({stolen / (elapsed * cores):.0%}: the run was that much slowed)"
        if stolen
        else ""
    )
    return (
        f"{took}; the machine's cores were busy for {seconds_text(busy)} of the {seconds_text(elapsed * cores)} "
        f"they had ({busy / (elapsed * cores):.0%}, servers and all){taken}."
    )


def _reference_text(passes: list[SuiteRun]) -> str:
    """How long the reference work took as each pass began; nothing for a record made before it was timed."""
    timed = [run for run in passes if run.reference]
    if not timed:
        return ""
    seconds = " and ".join(f"{run.reference:.3f} s" for run in timed)
    when = "as the pass began" if len(timed) == 1 else "as each pass began"
    return (
        f" A fixed piece of Python work done on every core at once (`reference_seconds`, best of "
        f"{REFERENCE_ROUNDS}) took {seconds} of CPU {when}: a machine slower by a fifth takes a fifth longer "
        "for it, whatever the suite."
    )


def _where(run: SuiteRun) -> str:
    return f"on {run.workers} workers side by side" if run.workers else "in one process"


def _tier_row(tier: str, times: list[TimedTest]) -> list[str]:
    wall, cpu = sum(t.wall for t in times), sum(t.cpu for t in times)
    ratio = f"{cpu / wall:.2f}" if wall else "-"
    return [tier, f"{len(times):,}", seconds_text(wall), seconds_text(cpu), ratio]


def _slowest(times: list[TimedTest]) -> list[TimedTest]:
    return sorted(times, key=lambda t: t.wall, reverse=True)[:SLOWEST]
