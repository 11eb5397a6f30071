"""What Linux says a process and the machine have used: CPU seconds and memory, read from /proc.

A cell's clock reads its kernel's processes (grading/cpu_clock.py), the
kernel-load command reads a class's kernels around a window of their work, and
the suite's timing figure reads the machine; each reading is one small file,
so it costs milliseconds.
"""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def machine_busy_seconds() -> float:
    """Seconds all the machine's cores have spent on its own work (not idle, not waiting on a disk, not
    taken by the host of a virtual machine) since it started; 0 where the machine does not say (no /proc/stat)."""
    ticks = _cpu_ticks()
    if not ticks:
        return 0.0
    idle, iowait, stolen = ticks[3], ticks[4], ticks[7]
    guest = ticks[8] + ticks[9]  # a virtual machine's time, already counted in user and nice
    return (sum(ticks) - idle - iowait - stolen - guest) / CLOCK_TICKS


def machine_stolen_seconds() -> float:
    """Seconds the host of this virtual machine gave its cores to others while they had work (Linux's steal
    time): the machine ran that much slower than a quiet one. 0 on bare metal, or where the machine does not say."""
    ticks = _cpu_ticks()
    return ticks[7] / CLOCK_TICKS if ticks else 0.0


def _cpu_ticks() -> list[int]:
    """/proc/stat's first line: user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice."""
    try:
        ticks = [int(field) for field in (PROC / "stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return []
    return (ticks + [0] * 10)[:10]  # an older kernel lists fewer


def process_stat(pid: int) -> tuple[int, int, int, int] | None:
    """(parent, process group, session, CPU ticks of every thread with reaped children) of `pid`; None once gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:  # the process ended while we looked
        return None
    # The command name may hold spaces and parentheses; the fields follow its last ")".
    fields = text.rsplit(")", 1)[1].split()
    # After the name: state, ppid, pgrp, session, ..., utime (11), stime, cutime, cstime (14).
    ticks = sum(int(value) for value in fields[11:15])
    return int(fields[1]), int(fields[2]), int(fields[3]), ticks


def process_ticks(pid: int) -> tuple[int, int] | None:
    """(CPU ticks with reaped children, CPU ticks of its own threads) of `pid` from one reading; None once gone."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    own = int(fields[11]) + int(fields[12])  # utime, stime
    return own + int(fields[13]) + int(fields[14]), own  # cutime, cstime


def process_own_ticks(pid: int) -> int:
    """CPU ticks of `pid`'s own threads, without its reaped children's; 0 once it is gone."""
    found = process_ticks(pid)
    return found[1] if found is not None else 0


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds of process `pid` (every thread), its reaped children's included; 0 once it is gone."""
    found = process_stat(pid)
    return found[3] / CLOCK_TICKS if found is not None else 0.0


def proportional_bytes(pid: int) -> int:
    """Memory of process `pid` with each shared page split among the processes that share it (PSS); 0 once gone.

    The sum over a class's kernels is what they take of the machine's memory together.
    """
    try:
        rollup = (PROC / str(pid) / "smaps_rollup").read_text()
    except OSError:
        return 0
    for line in rollup.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def memory_bytes(field: str) -> int:
    """A line of /proc/meminfo in bytes: "MemTotal" or "MemAvailable"; 0 where it is missing."""
    for line in (PROC / "meminfo").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return int(value.split()[0]) * 1024
    return 0
