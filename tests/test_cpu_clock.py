"""The kernel's clock: CPU seconds of a whole process group, and the verdicts a cell's limit gets from them."""

import os
import signal
import subprocess
import sys
import time

import pytest

from gradekit.core.process_readings import process_stat
from gradekit.grading.cpu_clock import (
    BACKSTOP_FACTOR,
    CLOCK_TICKS,
    TICK_SLACK_SECONDS,
    CellClock,
    ReadingSchedule,
    Usage,
    Verdict,
    _processes,
    group_usage,
    kernel_usage,
)
from gradekit.grading.idle_allowance import IdleAllowance

SPIN = "while True:\n    pass"
# A warm parent's stand-in: it spins on its own (its imports), and a kernel it forked spins too.
SPINNING_PARENT_AND_KERNEL = f"""
import os
if os.fork() == 0:
    os.setsid()
    {SPIN.replace(chr(10), chr(10) + "    ")}
{SPIN}
"""
# A leader that sleeps while two children spin: one in its session, one that left it (setsid).
SLEEPING_LEADER = f"""
import os, time
for leave in (False, True):
    if os.fork() == 0:
        if leave:
            os.setsid()
        {SPIN.replace(chr(10), chr(10) + "        ")}
time.sleep(600)
"""


def _start(source: str) -> subprocess.Popen:
    # Its own session, as a grading kernel leads its own.
    return subprocess.Popen([sys.executable, "-c", source], start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    """SIGKILL the process and every descendant, the child that left its session included."""
    table = _processes()
    family = {process.pid}
    while joined := {pid for pid, (parent, *_) in table.items() if parent in family} - family:
        family |= joined
    for pid in family:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()


def _until_cpu(pid: int, seconds: float) -> Usage:
    """Poll until the group has used `seconds` of CPU (bounded generously: the machine may be busy)."""
    give_up = time.monotonic() + 120
    while (usage := kernel_usage(pid)).cpu < seconds:
        assert time.monotonic() < give_up, f"the group used only {usage.cpu} s of CPU"
        time.sleep(0.05)
    return usage


@pytest.mark.nbgrader
def test_a_spinning_process_uses_cpu_time_and_a_sleeping_one_does_not():
    spinner, sleeper = _start(SPIN), _start("import time\ntime.sleep(600)")
    try:
        spun = _until_cpu(spinner.pid, 0.5)
        slept = kernel_usage(sleeper.pid)
    finally:
        _stop(spinner)
        _stop(sleeper)
    assert spun.cpu >= 0.5
    assert slept.cpu < 0.3  # the interpreter's start-up, nothing more
    assert slept.waiting is not None and spun.waiting is not None


# A kernel that only sleeps, in hundreds of threads woken together: each waits a moment for a CPU.
WOKEN_TOGETHER = """
import threading, time
threading.stack_size(256 * 1024)
def sleeper():
    while True:
        time.sleep(0.05 - time.monotonic() % 0.05)
for _ in range(300):
    threading.Thread(target=sleeper, daemon=True).start()
time.sleep(600)
"""


@pytest.mark.nbgrader
def test_threads_woken_together_never_add_up_to_a_starved_kernel():
    """Their waits summed once exceeded the wall time itself, and an idle kernel was judged held back by the machine."""
    sleeper = _start(WOKEN_TOGETHER)
    try:
        time.sleep(0.5)  # its threads started
        before, started = kernel_usage(sleeper.pid), time.monotonic()
        time.sleep(2.0)
        after, elapsed = kernel_usage(sleeper.pid), time.monotonic() - started
    finally:
        _stop(sleeper)
    assert before.waiting is not None and after.waiting is not None
    waited = after.waiting - before.waiting
    slept = elapsed - (after.cpu - before.cpu) - waited
    assert waited < slept, f"waited {waited:.2f} s of {elapsed:.2f} s"


@pytest.mark.nbgrader
def test_children_of_the_group_count_even_after_leaving_its_session():
    leader = _start(SLEEPING_LEADER)
    try:
        usage = _until_cpu(leader.pid, 1.0)
        own = process_stat(leader.pid)
    finally:
        _stop(leader)
    assert own is not None
    leader_alone = own[3] / CLOCK_TICKS
    assert usage.cpu >= 1.0 > leader_alone + 0.5  # the children's time, not the sleeping leader's


@pytest.mark.nbgrader
def test_the_graders_own_processes_count_apart_and_the_kernels_they_fork_still_count():
    worker = _start("import time\ntime.sleep(600)")
    parent = _start(SPINNING_PARENT_AND_KERNEL)  # lent to the worker: not its descendant
    try:
        give_up = time.monotonic() + 120
        while (usage := kernel_usage(worker.pid, (parent.pid,), {parent.pid})).grader < 1.0 or usage.cpu < 1.0:
            assert time.monotonic() < give_up, f"the parent and its kernel used only {usage}"
            time.sleep(0.05)
        whole = kernel_usage(worker.pid, (parent.pid,))
    finally:
        _stop(parent)
        _stop(worker)
    assert whole.grader == 0.0 and whole.cpu >= usage.cpu + usage.grader - 0.5  # counted as the kernel's without it
    assert usage.cpu < whole.cpu - 0.5  # the parent's own spinning left out of the kernel's CPU...
    assert usage.grader >= 1.0  # ...and told apart


@pytest.mark.nbgrader
def test_a_graders_process_that_ends_between_the_scan_and_its_reading_is_not_counted_as_the_kernels(monkeypatch):
    import gradekit.grading.cpu_clock as cpu_clock

    # The worker's own warm parent: its child, spinning (its imports).
    worker = _start(
        f"import os, time\nif os.fork() == 0:\n    {SPIN.replace(chr(10), chr(10) + '    ')}\ntime.sleep(600)"
    )
    try:
        _until_cpu(worker.pid, 1.0)
        (parent,) = [pid for pid, (ppid, *_) in _processes().items() if ppid == worker.pid]
        real = cpu_clock.process_ticks
        monkeypatch.setattr(cpu_clock, "process_ticks", lambda pid: None if pid == parent else real(pid))
        usage = kernel_usage(worker.pid, (), {parent})  # as if it ended after the scan read it
    finally:
        _stop(worker)
    assert usage.cpu < 0.5 and usage.grader == 0.0


@pytest.mark.nbgrader
def test_a_reading_by_the_kernels_group_counts_every_process_the_group_holds():
    leader, spinner = _start("import time\ntime.sleep(600)"), _start(SPIN)  # the spinner: in no session of the leader's
    try:
        by_group = group_usage(lambda: [spinner.pid])
        give_up = time.monotonic() + 120
        while (usage := by_group(leader.pid)).cpu < 0.5:
            assert time.monotonic() < give_up, f"the group used only {usage.cpu} s of CPU"
            time.sleep(0.05)
        assert kernel_usage(leader.pid).cpu < 0.3  # the scan by session sees only the sleeping leader
        assert usage.waiting is not None
    finally:
        _stop(spinner)
        _stop(leader)


@pytest.mark.unit
def test_readings_fall_due_on_their_own_schedule():
    kernel = FakeKernel()
    schedule = ReadingSchedule(0.25, kernel.now)
    assert schedule.wait() == pytest.approx(0.25) and not schedule.due()
    kernel.time += 0.1  # a message arrived meanwhile: not yet
    assert not schedule.due() and schedule.wait() == pytest.approx(0.15)
    kernel.time += 0.2
    assert schedule.due() and not schedule.due() and schedule.wait() == pytest.approx(0.25)


class FakeKernel:
    """Totals and a wall clock the test sets by hand."""

    def __init__(self):
        self.cpu, self.waiting, self.time = 0.0, 0.0, 100.0
        self.grader = 0.0

    def usage(self, pid: int) -> Usage:
        return Usage(self.cpu, self.waiting, self.grader)

    def now(self) -> float:
        return self.time


def _clock(kernel: FakeKernel, limit: float = 10.0) -> CellClock:
    clock = CellClock(1, limit, kernel.usage, kernel.now)
    clock.resume()
    return clock


@pytest.mark.unit
def test_verdicts_of_a_cell_against_its_limit():
    kernel = FakeKernel()
    clock = _clock(kernel)
    kernel.cpu, kernel.time = 9.0, 112.0  # within the limit in CPU, past it on the wall clock
    assert clock.verdict() is Verdict.RUNNING
    kernel.cpu = 10.5
    assert clock.verdict() is Verdict.OVER_LIMIT

    sleeper = FakeKernel()
    clock = _clock(sleeper)
    sleeper.cpu, sleeper.waiting, sleeper.time = 0.1, 0.2, 100.0 + BACKSTOP_FACTOR * 10
    assert clock.verdict() is Verdict.SAT_IDLE

    starved = FakeKernel()
    clock = _clock(starved)
    starved.cpu, starved.waiting, starved.time = 4.0, 24.0, 100.0 + BACKSTOP_FACTOR * 10
    assert clock.verdict() is Verdict.OVERLOADED
    assert "4.0 s of its 10 s limit" in clock.describe() and "waited 24.0 s" in clock.describe()


@pytest.mark.unit
def test_the_graders_own_cpu_is_neither_the_kernels_nor_idle():
    kernel = FakeKernel()
    clock = CellClock(1, 10.0, kernel.usage, kernel.now, allowance=IdleAllowance(1.0))
    clock.resume()
    for _ in range(6):  # a warm parent importing for 6 s while the task waits for it
        kernel.grader += 1.0
        kernel.time += 1.0
        assert clock.verdict() is Verdict.RUNNING
    assert clock.cpu == 0.0 and clock.grader == pytest.approx(6.0) and not clock.allowance.spent_out
    kernel.time += 2.0  # then two seconds with nothing running: the submission's idle
    assert clock.verdict() is Verdict.IDLE_SPENT

    starved = FakeKernel()
    clock = _clock(starved)
    starved.cpu, starved.grader, starved.waiting = 4.0, 14.0, 4.0
    starved.time += BACKSTOP_FACTOR * 10
    assert clock.verdict() is Verdict.OVERLOADED  # the grader's work and the machine's wait, not the kernel's sleep


@pytest.mark.unit
def test_the_wall_clock_runs_only_while_resumed_and_totals_never_go_back():
    kernel = FakeKernel()
    clock = _clock(kernel)
    kernel.time += 20
    clock.pause()
    kernel.time += 1000  # the grader checking an answer: not the kernel's time
    clock.resume()
    kernel.time += 5
    assert clock.verdict() is Verdict.RUNNING and clock.wall == pytest.approx(20)
    kernel.cpu = 3.0
    clock.verdict()
    kernel.cpu = 1.0  # a spinning child ended and was reaped outside the kernel: its time stays counted
    clock.verdict()
    kernel.cpu = 2.5
    clock.verdict()
    assert clock.cpu == pytest.approx(4.5)


@pytest.mark.unit
def test_an_unknown_run_queue_wait_is_judged_as_the_student_sitting():
    kernel = FakeKernel()
    kernel.waiting = None  # type: ignore[assignment]
    clock = _clock(kernel)
    kernel.time += BACKSTOP_FACTOR * 10
    assert clock.verdict() is Verdict.SAT_IDLE


def _clock_with(kernel: FakeKernel, allowance: IdleAllowance, limit: float = 10.0) -> CellClock:
    clock = CellClock(1, limit, kernel.usage, kernel.now, allowance=allowance)
    clock.resume()
    return clock


@pytest.mark.unit
def test_sleep_is_charged_to_the_submissions_allowance_and_ends_a_sleeping_cell_once_it_is_spent():
    allowance = IdleAllowance(5.0)
    first = FakeKernel()
    clock = _clock_with(first, allowance)
    first.time += 4  # sleeps 4 s: charged (but for a tick's rounding), within the allowance
    assert clock.verdict() is Verdict.RUNNING and allowance.spent == pytest.approx(4 - TICK_SLACK_SECONDS)
    clock.pause()

    second = FakeKernel()  # the next cell of the same submission shares the allowance
    clock = _clock_with(second, allowance)
    second.time += 1.5
    assert clock.verdict() is Verdict.IDLE_SPENT  # far below the backstop (30 s)
    assert "sat idle 5.5 s in all, past its 5 s idle allowance" in clock.describe()


@pytest.mark.unit
def test_a_cell_that_computes_after_the_allowance_was_spent_runs_on():
    allowance = IdleAllowance(1.0, spent=3.0)
    kernel = FakeKernel()
    clock = _clock_with(kernel, allowance)
    kernel.time += 2
    kernel.cpu, kernel.waiting = 1.2, 0.7  # running or waiting for a CPU all along
    assert clock.verdict() is Verdict.RUNNING and allowance.spent == pytest.approx(3.1 - TICK_SLACK_SECONDS)


@pytest.mark.unit
def test_seconds_of_several_busy_processes_are_not_banked_to_excuse_a_later_sleep():
    allowance = IdleAllowance(5.0)
    kernel = FakeKernel()
    clock = _clock_with(kernel, allowance, limit=100.0)
    kernel.time, kernel.cpu = kernel.time + 10, 20.0  # two threads busy for 10 s: 20 CPU seconds
    assert clock.verdict() is Verdict.RUNNING and allowance.spent == 0
    kernel.time += 6  # then a sleep: its totals alone would still say nothing was idle
    assert clock.verdict() is Verdict.IDLE_SPENT and allowance.spent == pytest.approx(6 - TICK_SLACK_SECONDS)


@pytest.mark.unit
def test_sleep_mixed_with_work_is_ended_once_it_passes_the_allowance_however_busy_each_reading_was():
    allowance = IdleAllowance(1.0)
    kernel = FakeKernel()
    clock = _clock_with(kernel, allowance, limit=100.0)
    readings = 0
    while clock.verdict() is Verdict.RUNNING:  # each quarter second busy for 60% of it, idle for the rest
        assert readings < 20, "never ended"
        kernel.time, kernel.cpu = kernel.time + 0.25, kernel.cpu + 0.15
        readings += 1
    assert allowance.spent == pytest.approx((0.1 - TICK_SLACK_SECONDS) * readings) and 1.25 < allowance.spent < 1.45


@pytest.mark.unit
def test_without_run_queue_waits_idle_time_is_not_charged_and_only_the_backstop_applies():
    allowance = IdleAllowance(1.0)
    kernel = FakeKernel()
    kernel.waiting = None  # type: ignore[assignment]
    clock = _clock_with(kernel, allowance)
    kernel.time += 20  # idle or starved: no way to tell
    assert clock.verdict() is Verdict.RUNNING and allowance.spent == 0
