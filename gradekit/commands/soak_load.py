"""Load on the machine while a cohort is graded: processes that spin on the CPU and one that holds memory.

Each is a small program of its own (`python -c`), so it can never be taken for
a grading worker, and each leaves by itself once its parent is gone: a soak
that is killed leaves no hog spinning.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

# Spin until the parent that started it is gone (then the soak was killed and nobody would stop it).
HOG_SOURCE = """
import os
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(200_000):
        pass
"""

# Hold argv[1] bytes and touch every page of them each second, so the pages stay resident.
MEMORY_SOURCE = """
import os, sys, time
parent = os.getppid()
held = bytearray(int(sys.argv[1]))
page = os.sysconf("SC_PAGE_SIZE")
while os.getppid() == parent:
    for offset in range(0, len(held), page):
        held[offset] = (held[offset] + 1) % 256
    time.sleep(1)
"""

STOP_WAIT_SECONDS = 10


class Load:
    """`hogs` CPU-spinning processes and one holding `memory_bytes`, from `__enter__` until `__exit__`."""

    def __init__(self, hogs: int, memory_bytes: int):
        self.hogs = hogs
        self.memory_bytes = memory_bytes
        self.processes: list[subprocess.Popen] = []

    @property
    def pids(self) -> frozenset[int]:
        return frozenset(process.pid for process in self.processes)

    def __enter__(self) -> Load:
        try:
            for _ in range(self.hogs):
                self.processes.append(_start(HOG_SOURCE))
            if self.memory_bytes > 0:
                self.processes.append(_start(MEMORY_SOURCE, str(self.memory_bytes)))
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def stop(self) -> None:
        """Kill every process this load started and wait until each is gone."""
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
        for process in self.processes:
            process.wait(timeout=STOP_WAIT_SECONDS)


def _start(source: str, *arguments: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", source, *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"PATH": os.environ.get("PATH", "")},
    )
