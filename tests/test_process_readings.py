"""What /proc says a process and the machine used: CPU seconds that grow with work, memory that a process holds."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradekit.core import process_readings
from gradekit.core.process_readings import (
    CLOCK_TICKS,
    machine_busy_seconds,
    machine_stolen_seconds,
    memory_bytes,
    process_cpu_seconds,
    process_own_ticks,
    process_stat,
    proportional_bytes,
)

NEVER_A_PID = int(Path("/proc/sys/kernel/pid_max").read_text())  # process numbers stay below it


def _spin(seconds):
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


@pytest.mark.unit
def test_a_process_cpu_time_and_the_machines_busy_time_grow_by_the_work_done():
    mine, machine = process_cpu_seconds(os.getpid()), machine_busy_seconds()
    _spin(0.5)
    assert process_cpu_seconds(os.getpid()) - mine >= 0.4
    assert machine_busy_seconds() - machine >= 0.4  # this process's half second, and whatever else ran


@pytest.mark.nbgrader  # it starts a process
def test_a_process_own_ticks_leave_out_its_reaped_childrens():
    before = process_own_ticks(os.getpid()), process_stat(os.getpid())[3]
    subprocess.run(
        [sys.executable, "-c", "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"]
    )
    own, with_children = process_own_ticks(os.getpid()) - before[0], process_stat(os.getpid())[3] - before[1]
    assert with_children - own >= 0.4 * CLOCK_TICKS  # the child's half second counts only with the reaped children
    assert process_own_ticks(NEVER_A_PID) == 0


@pytest.mark.unit
def test_the_hosts_steal_time_is_not_the_machines_work_but_is_read_on_its_own(tmp_path, monkeypatch):
    # user nice system idle iowait irq softirq steal guest guest_nice, in ticks (the guest's 300 inside user)
    (tmp_path / "stat").write_text(f"cpu  {1000 + 300} 20 200 5000 70 3 7 400 300 0\ncpu0 1 2 3\n")
    monkeypatch.setattr(process_readings, "PROC", tmp_path)
    assert machine_busy_seconds() == pytest.approx((1300 + 20 + 200 + 3 + 7) / CLOCK_TICKS)  # guest once
    assert machine_stolen_seconds() == pytest.approx(400 / CLOCK_TICKS)
    (tmp_path / "stat").write_text("cpu  10 0 5 100\n")  # an old kernel's four fields: no steal to read
    assert (machine_busy_seconds(), machine_stolen_seconds()) == (pytest.approx(15 / CLOCK_TICKS), 0.0)
    (tmp_path / "stat").unlink()
    assert (machine_busy_seconds(), machine_stolen_seconds()) == (0.0, 0.0)


@pytest.mark.nbgrader  # it starts a process
def test_the_cpu_time_of_reaped_children_counts_as_their_parents():
    before = process_cpu_seconds(os.getpid())
    subprocess.run(
        [sys.executable, "-c", "import time\nt = time.process_time() + 0.5\nwhile time.process_time() < t: pass"]
    )
    assert process_cpu_seconds(os.getpid()) - before >= 0.4


@pytest.mark.unit
def test_a_process_holds_memory_and_one_that_is_gone_holds_none_and_used_nothing():
    assert proportional_bytes(os.getpid()) > 10 * 2**20  # an interpreter with pytest loaded
    assert proportional_bytes(NEVER_A_PID) == 0 and process_cpu_seconds(NEVER_A_PID) == 0.0


@pytest.mark.unit
def test_a_processs_stat_says_its_parent_group_session_and_cpu_ticks():
    parent, group, session, ticks = process_stat(os.getpid())
    assert (parent, group, session) == (os.getppid(), os.getpgrp(), os.getsid(0)) and ticks > 0
    assert process_stat(NEVER_A_PID) is None


@pytest.mark.unit
def test_the_machines_memory_is_read_by_its_field_name():
    total, available = memory_bytes("MemTotal"), memory_bytes("MemAvailable")
    assert 0 < available <= total
    assert memory_bytes("NoSuchField") == 0
