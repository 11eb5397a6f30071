"""A grading kernel's own clock: the CPU seconds it used, and how long it waited for a CPU.

A cell's time limit is judged on CPU time, which a busy machine cannot
inflate: a cell that spins past the limit used more CPU seconds than the limit
allows, however many other processes shared the machine with it. CPU time is
summed over every process of the kernel (its cgroup's processes where it has
one, else its session and process group and their descendants), children
reaped by them included.

CPU time alone never ends a cell that sleeps or blocks, so the wall clock
stays as a backstop at `BACKSTOP_FACTOR` times the limit. When it fires, the
kernel's run-queue wait (time it was ready to run but had no CPU, from
/proc/<pid>/task/<tid>/schedstat) tells who is to blame: a kernel that waited
for a CPU longer than it slept was held back by the machine, one that mostly
slept or blocked just sat there, which is the student's timeout. The wait is
that of the kernel's longest-waiting thread, never a sum over threads: hundreds
of sleeping threads woken at once each wait a moment, and summed they would
make an idle kernel look starved, turning the student's timeout into the
grader's failure.

The seconds in which the kernel neither ran nor waited for a CPU are also
charged, read by read, to the submission's idle allowance when the clock has
one (idle_allowance.py): once it is spent, a cell that sits idle for more than
a moment longer is ended then, long before its backstop, however it mixes
its sleep with work.
"""

from __future__ import annotations

import dataclasses
import enum
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from gradekit.core.process_readings import CLOCK_TICKS, process_own_ticks, process_stat, process_ticks
from gradekit.grading.idle_allowance import IdleAllowance

# Three times the limit: a cell that needs its whole limit in CPU still gets it
# while sharing a core with two other busy processes, and a kernel that only
# sleeps is ended after a bounded wait (3 minutes under the course's 60 s limit).
# A constant rather than a setting: it is a property of how the limit is
# judged, the same for every course, and it travels with the code to every worker.
BACKSTOP_FACTOR = 3
# How often a running cell's clock is read: a few files of the kernel's cgroup, or one scan of
# /proc without one (milliseconds); a cell (or a test cell's calls together) shorter than this is not read.
POLL_SECONDS = 0.25
# CPU time is read in clock ticks: a reading may come out up to this much short, which is not idle.
TICK_SLACK_SECONDS = 2 / CLOCK_TICKS
# Idle seconds a clock may add once its submission's allowance is spent, before it ends the cell:
# an honest cell still computing after an earlier cell spent the allowance adds next to none.
IDLE_GRACE_SECONDS = 0.25
PROC = Path("/proc")


@dataclasses.dataclass(frozen=True)
class Usage:
    """A kernel's totals so far: CPU seconds, and the seconds its longest-waiting thread waited for a CPU (None where unknown).

    `grader`: CPU seconds the grader's own processes among them used (a warm parent's imports), counted apart:
    neither the kernel's CPU nor idle time.
    """

    cpu: float
    waiting: float | None
    grader: float = 0.0


class Verdict(enum.Enum):
    """Where a running cell stands against its limit; only the last one is the grader's fault."""

    RUNNING = "still within its limit"
    OVER_LIMIT = "used more CPU time than its limit"
    SAT_IDLE = "sat past the wall-clock backstop, sleeping or blocked, on a machine that let it run"
    OVERLOADED = "reached the wall-clock backstop waiting for a CPU the machine did not give it"
    IDLE_SPENT = "sat sleeping or blocked after its submission's idle allowance was spent"


def kernel_usage(leader: int, also: Iterable[int] = (), grader: Iterable[int] = ()) -> Usage:
    """CPU and run-queue wait of every live process of the kernel led by `leader`, in seconds.

    `also`: further processes whose trees count with it (the warm parent lent to a pool worker). A
    parent kept from run to run holds every kernel it ever reaped in its reaped-children ticks: a
    scan that met a reap half done would count them all at once. So its tree counts each process's
    own ticks only, which loses at most one reading's worth of a kernel that ended.

    `grader`: processes of the tree whose own CPU is the grader's (a warm parent and its box): it
    goes to `Usage.grader`, while the kernels they fork and reap still count as the kernel's.
    """
    processes = _processes()
    members = _tree(processes, {leader}, by_session=True)
    ticks = {pid: processes[pid][3] for pid in members}
    ticks.update({pid: process_own_ticks(pid) for pid in _tree(processes, set(also), by_session=False) - members})
    grader_ticks = 0
    for pid in set(grader) & ticks.keys():
        if pid not in members:  # the lent tree's ticks are its own already: all of them the grader's
            grader_ticks += ticks[pid]
            ticks[pid] = 0
            continue
        read = process_ticks(pid)  # both from one reading: a process that ends between two is never half counted
        if read is None:  # it ended since the scan: what it used is its reaper's to show
            del ticks[pid]
            continue
        with_reaped, own = read
        ticks[pid] = with_reaped - own
        grader_ticks += own
    return _summed(ticks, grader_ticks)


def _tree(processes: dict[int, tuple[int, int, int, int]], roots: set[int], by_session: bool) -> set[int]:
    """The live processes among `roots`, their descendants and (`by_session`) their groups' and sessions' members."""
    members = {pid for pid in roots if pid in processes}
    if by_session:
        members |= {pid for pid, (_, group, session, _) in processes.items() if group in roots or session in roots}
    # A child that left the session (setsid) is still the kernel's while its parent is.
    grown = True
    while grown:
        joined = {pid for pid, (parent, *_) in processes.items() if parent in members} - members
        members |= joined
        grown = bool(joined)
    return members


def group_usage(processes: Callable[[], Iterable[int]]) -> Callable[[int], Usage]:
    """A reading of the kernel by its cgroup's `processes` rather than a scan of every process of the machine.

    Everything the kernel starts is born in its group and cannot leave it, so the
    group holds its whole tree, children that left its session included; the
    reading costs a few files instead of one per process on the machine.
    """

    def usage(leader: int) -> Usage:
        stats = {pid: process_stat(pid) for pid in {leader, *processes()}}
        return _summed({pid: fields[3] for pid, fields in stats.items() if fields is not None})

    return usage


def _summed(ticks: dict[int, int], grader_ticks: int = 0) -> Usage:
    """The CPU seconds of processes by their ticks, and the longest run-queue wait of any one of their threads."""
    waits = [_waiting(pid) for pid in ticks]
    known = [wait for wait in waits if wait is not None]
    return Usage(sum(ticks.values()) / CLOCK_TICKS, max(known) if known else None, grader_ticks / CLOCK_TICKS)


class ReadingSchedule:
    """When a running cell's clock is next read: every `every` seconds, whatever the kernel sends meanwhile."""

    def __init__(self, every: float = POLL_SECONDS, now: Callable[[], float] = time.monotonic):
        self._every, self._now = every, now
        self._next = now() + every

    def wait(self) -> float:
        """Seconds until the next reading is due (0 when it is)."""
        return max(self._next - self._now(), 0.0)

    def due(self) -> bool:
        """Whether a reading is due now; if so, the next one is set a period later."""
        if self._now() < self._next:
            return False
        self._next = self._now() + self._every
        return True


class CellClock:
    """The kernel time one cell has used against its `limit` (seconds), judged by `verdict()`.

    Totals are read on demand and only their increases are added up, so a process
    that ends and is reaped outside the kernel takes nothing already counted with it.
    The wall clock runs only between `resume()` and `pause()`: for a sealed test,
    only while the kernel is answering a call, not while the grader checks the answer.
    With an `allowance`, each reading's idle seconds are charged to it.
    """

    def __init__(
        self,
        leader: int,
        limit: float,
        usage: Callable[[int], Usage] = kernel_usage,
        now: Callable[[], float] = time.monotonic,
        allowance: IdleAllowance | None = None,
    ):
        self.leader, self.limit, self.allowance = leader, limit, allowance
        self._usage, self._now = usage, now
        self.cpu = self.waiting = self.wall = 0.0
        self.grader = 0.0  # the grader's own CPU among the clocked processes: neither the limit's nor idle
        self._waiting_known = True
        self._idle_past_allowance = 0.0  # idle seconds this clock added after its allowance was spent
        self._last = usage(leader)
        self._last_wall = 0.0
        self._since: float | None = None
        # When it is next read: by its own wall time, so a test cell's calls each shorter than a
        # reading's period are read all the same, once their time adds up to one.
        self.schedule = ReadingSchedule(now=self._wall)

    def resume(self) -> None:
        if self._since is None:
            self._since = self._now()

    def pause(self) -> None:
        if self._since is not None:
            self.wall += self._now() - self._since
            self._since = None

    def verdict(self) -> Verdict:
        """Read the kernel's clock and say where the cell stands."""
        self._read()
        if self.cpu > self.limit:
            return Verdict.OVER_LIMIT
        if self._idle_past_allowance > IDLE_GRACE_SECONDS:
            return Verdict.IDLE_SPENT
        if self._wall() < BACKSTOP_FACTOR * self.limit:
            return Verdict.RUNNING
        if not self._waiting_known:
            return Verdict.SAT_IDLE  # no way to tell; judged as before CPU time was measured
        # The wall time the kernel neither ran nor waited for, nor the grader used for its own work.
        slept = self._wall() - self.cpu - self.grader - self.waiting
        return Verdict.OVERLOADED if self.waiting + self.grader > slept else Verdict.SAT_IDLE

    def describe(self) -> str:
        waited = "an unknown time" if not self._waiting_known else f"{self.waiting:.1f} s"
        idle = f"; the submission {self.allowance.describe()}" if self.allowance and self.allowance.spent_out else ""
        return (
            f"in {self._wall():.1f} s the kernel ran {self.cpu:.1f} s of its {self.limit:g} s limit "
            f"and waited {waited} for a CPU{idle}"
        )

    def _read(self) -> None:
        current, wall = self._usage(self.leader), self._wall()
        ran = max(current.cpu - self._last.cpu, 0.0)
        self.cpu += ran
        busy = max(current.grader - self._last.grader, 0.0)
        self.grader += busy
        if current.waiting is None or self._last.waiting is None:
            self._waiting_known = self._waiting_known and current.waiting is not None
        else:
            waited = max(current.waiting - self._last.waiting, 0.0)
            self.waiting += waited
            self._charge_idle(wall - self._last_wall, ran + busy, waited)
        self._last, self._last_wall = current, wall

    def _charge_idle(self, elapsed: float, ran: float, waited: float) -> None:
        """Charge the seconds since the last reading in which nothing ran or waited for a CPU.

        Read by read, never from the totals: seconds of several busy processes
        at once are not banked to excuse a later sleep.
        """
        if self.allowance is None:
            return
        idle = max(elapsed - ran - waited - TICK_SLACK_SECONDS, 0.0)
        already = max(self.allowance.spent, self.allowance.seconds)
        self.allowance.charge(idle)
        self._idle_past_allowance += max(self.allowance.spent - already, 0.0)

    def _wall(self) -> float:
        return self.wall + (self._now() - self._since if self._since is not None else 0.0)


def _processes() -> dict[int, tuple[int, int, int, int]]:
    """pid -> (parent, process group, session, CPU ticks with reaped children) of every process we can read."""
    found = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = process_stat(int(entry.name))
            if fields is not None:
                found[int(entry.name)] = fields
    return found


def _waiting(pid: int) -> float | None:
    """Seconds the longest-waiting thread of `pid` spent runnable but not running (schedstat's second field)."""
    longest, known = 0, False
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            longest = max(longest, int((task / "schedstat").read_text().split()[1]))
            known = True
        except (OSError, IndexError, ValueError):
            continue
    return longest / 1e9 if known else None
