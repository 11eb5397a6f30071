"""The soak's view of the process tree, read from /proc: which processes grade, and which of them to hurt.

The soak injects its faults from outside the grading code, as the operating
system or an operator would: it finds the grading workers (children of this
process, forked from it), the kernel zygotes (`python -c` with the zygote's
source, below bubblewrap's process when boxed; the coordinator's own, lent to its
workers, or a worker's) and the kernels each zygote forked, by walking /proc.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gradekit.grading.warm_kernels import ZYGOTE_SOURCE

PROC = Path("/proc")
ZYGOTE_FIRST_LINE = ZYGOTE_SOURCE.splitlines()[0]


@dataclasses.dataclass(frozen=True)
class ProcessEntry:
    pid: int
    parent: int
    started: int  # clock ticks after boot: with the pid, it names one process even after the pid is reused


def process_table() -> dict[int, ProcessEntry]:
    """Every process now running, by pid (a process that ends while the table is read is left out)."""
    table = {}
    for folder in PROC.iterdir():
        if folder.name.isdigit():
            entry = read_entry(int(folder.name))
            if entry is not None:
                table[entry.pid] = entry
    return table


def read_entry(pid: int) -> ProcessEntry | None:
    """The process's parent and start time, or None once it has ended (a zombie counts as ended)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name (second field) may hold spaces and parentheses: split after its last ')'.
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None
    return ProcessEntry(pid, int(fields[1]), int(fields[19]))


def is_alive(entry: ProcessEntry) -> bool:
    """Whether the very process `entry` names still runs (not merely another one under its pid)."""
    now = read_entry(entry.pid)
    return now is not None and now.started == entry.started


def command_line(pid: int) -> tuple[str, ...]:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return ()
    return tuple(part.decode(errors="replace") for part in raw.split(b"\0")[:-1])


def children(pid: int, table: dict[int, ProcessEntry]) -> list[ProcessEntry]:
    return sorted((entry for entry in table.values() if entry.parent == pid), key=lambda entry: entry.pid)


def descendants(pid: int, table: dict[int, ProcessEntry]) -> list[ProcessEntry]:
    """Every process below `pid`, parents before their children."""
    found = []
    waiting = children(pid, table)
    while waiting:
        entry = waiting.pop(0)
        found.append(entry)
        waiting.extend(children(entry.pid, table))
    return found


@dataclasses.dataclass(frozen=True)
class GradingTree:
    """The grading processes below one coordinator, as they stand at one moment."""

    workers: tuple[ProcessEntry, ...]
    zygotes: tuple[ProcessEntry, ...]
    kernels: tuple[ProcessEntry, ...]

    @property
    def everyone(self) -> tuple[ProcessEntry, ...]:
        return self.workers + self.zygotes + self.kernels


def grading_tree(coordinator: int, spare: frozenset[int] = frozenset()) -> GradingTree:
    """The coordinator's workers (forked, so they share its command line), their zygotes and kernels.

    `spare` names children that are not workers (the soak's own load), whatever they look like.
    """
    table = process_table()
    own_command = command_line(coordinator)
    workers = tuple(
        entry
        for entry in children(coordinator, table)
        if entry.pid not in spare and command_line(entry.pid) == own_command
    )
    # A boxed zygote runs below bubblewrap's own process, so it is looked for among all descendants: of the
    # worker that started it, or of the coordinator, which lends its warm parents to its workers (kept_parents.py).
    mine = [entry for entry in children(coordinator, table) if entry.pid not in spare]
    below = [*mine, *(entry for child in mine for entry in descendants(child.pid, table))]
    zygotes = tuple(entry for entry in below if is_zygote(entry.pid))
    kernels = tuple(entry for zygote in zygotes for entry in children(zygote.pid, table))
    return GradingTree(workers, zygotes, kernels)


def is_zygote(pid: int) -> bool:
    words = command_line(pid)
    return len(words) >= 3 and words[1] == "-c" and words[2].startswith(ZYGOTE_FIRST_LINE)
