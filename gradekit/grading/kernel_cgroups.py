"""A memory and pids cgroup per grading kernel: the operating system's limit on the kernel's whole tree.

The address-space cap (`CourseKit.kernel_memory_gb`) holds per process; a
cgroup holds for the kernel and everything it starts, threads and the pages of
its tmpfs included. Where the grader can make one (cgroup v2 with the memory and
pids controllers, or v1's `memory` and `pids` hierarchies, writable), each
worker makes a kit group of its own below the group it runs in (so every limit
on the grader still holds), and a group per kernel below that, with the
memory and task limits; the kernel is moved in before any cell runs, the
group is emptied (SIGKILL) when the kernel ends and removed once its last process is gone. Its counters say
whether the kernel's tree was OOM-killed or refused a task.

Where no group can be made, grading goes on, every row says so (a note),
and the guard's seccomp filter, which refuses every new process in any case,
keeps the per-process cap meaningful: a kernel is one process. Threads are then
bounded only by the address space their stacks take.
Only v1 is tested on a real system here; v2 is tested on a file tree laid out like one.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import os
import signal
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
KERNEL_TASKS = 512  # processes and threads of one kernel: an honest one runs a few dozen
KIT_GROUP_PREFIX = "gradekit-"
EMPTY_WAIT_SECONDS = 5.0
KILL_ROUNDS = 64  # looks at a group's processes while killing it; a few suffice, the rest bound a pathological tree


class CgroupUnavailable(OSError):
    """No kernel group can be made here; the message says why."""


@dataclasses.dataclass(frozen=True)
class TreeEvents:
    """How often the kernel's tree was OOM-killed and refused a new task, as counted so far."""

    out_of_memory: int = 0
    too_many_tasks: int = 0


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where the kit's groups go: one folder (v2) or one per controller (v1)."""

    version: int
    memory: Path  # the kit group in the memory hierarchy (v2: the unified one)
    pids: Path

    @property
    def folders(self) -> tuple[Path, ...]:
        return (self.memory,) if self.memory == self.pids else (self.memory, self.pids)


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """Controller ("" for v2) -> this process's group path, from /proc/self/cgroup's lines."""
    paths = {}
    for line in proc_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def find_layout(root: Path = CGROUP_ROOT, proc_cgroup: str | None = None, name: str = "") -> Layout:
    """The kit group's folders for this process, v2 first; raises CgroupUnavailable where there are none."""
    own = _own_paths(proc_cgroup if proc_cgroup is not None else Path("/proc/self/cgroup").read_text())
    name = name or f"{KIT_GROUP_PREFIX}{os.getpid()}"
    controllers = root / "cgroup.controllers"
    if controllers.exists():
        offered = controllers.read_text().split()
        if not {"memory", "pids"} <= set(offered):
            raise CgroupUnavailable(f"cgroup v2 offers no memory and pids controllers here ({' '.join(offered)})")
        folder = root / own.get("", "/").lstrip("/") / name
        return Layout(2, folder, folder)
    if (root / "memory" / "cgroup.procs").exists() and (root / "pids" / "cgroup.procs").exists():
        memory = root / "memory" / own.get("memory", "/").lstrip("/") / name
        pids = root / "pids" / own.get("pids", "/").lstrip("/") / name
        return Layout(1, memory, pids)
    raise CgroupUnavailable(f"no cgroup v2 nor v1 memory and pids hierarchies under {root}")


def make_kit_group(layout: Layout) -> Layout:
    """Make the worker's kit group; in v2, hand its children the memory and pids controllers."""
    try:
        if layout.version == 2:
            _write(layout.memory.parent / "cgroup.subtree_control", "+memory +pids")
        for folder in layout.folders:
            remove_groups_of_ended_workers(folder.parent)
            folder.mkdir(exist_ok=True)
        if layout.version == 2:
            _write(layout.memory / "cgroup.subtree_control", "+memory +pids")
    except OSError as error:
        raise CgroupUnavailable(f"cannot make a cgroup for the kernels here ({error})") from None
    return layout


class KernelGroup:
    """One kernel's group: its limits, its counters, its removal."""

    def __init__(self, layout: Layout, name: str):
        self.layout = layout
        self.memory, self.pids = layout.memory / name, layout.pids / name
        self.memory_bytes = self.tasks = 0

    @property
    def folders(self) -> tuple[Path, ...]:
        return (self.memory,) if self.memory == self.pids else (self.memory, self.pids)

    def limit(self, memory_bytes: int, tasks: int) -> None:
        """Make the group and set its limits: no swap beyond the memory, the whole tree killed on OOM (v2)."""
        self.memory_bytes, self.tasks = memory_bytes, tasks
        for folder in self.folders:
            folder.mkdir()
        if self.layout.version == 1:
            _write(self.memory / "memory.limit_in_bytes", str(memory_bytes))  # before memsw, which must not be lower
            _write_if_there(self.memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        else:
            _write(self.memory / "memory.max", str(memory_bytes))
            _write_if_there(self.memory / "memory.swap.max", "0")
            _write_if_there(self.memory / "memory.oom.group", "1")
        _write(self.pids / "pids.max", str(tasks))

    def add(self, pid: int) -> None:
        """Move process `pid` (all its threads) into the group; what it starts later is born inside."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", str(pid))

    def events(self) -> TreeEvents:
        """The group's counters: OOM kills (v1 memory.oom_control, v2 memory.events) and refused tasks (pids.events)."""
        memory = "memory.oom_control" if self.layout.version == 1 else "memory.events"
        return TreeEvents(_counter(self.memory / memory, "oom_kill"), _counter(self.pids / "pids.events", "max"))

    def peak_bytes(self) -> int:
        """The most memory the group has held (v1 memory.max_usage_in_bytes, v2 memory.peak)."""
        name = "memory.max_usage_in_bytes" if self.layout.version == 1 else "memory.peak"
        try:
            return int((self.memory / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return 0

    def processes(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders:
            try:
                found |= {int(pid) for pid in (folder / "cgroup.procs").read_text().split()}
            except (OSError, ValueError):
                continue
        return sorted(found)

    def remove(self) -> None:
        """Kill whatever is left in the group, wait until it is empty, remove it; never raises."""
        deadline = time.monotonic() + EMPTY_WAIT_SECONDS
        pause = 0.001  # a killed kernel is usually gone within a millisecond or two: look soon, then less often
        while not self.end() and time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(2 * pause, 0.02)

    def end(self) -> bool:
        """Kill whatever is in the group and remove it if it is empty already; True once it is gone. Never raises.

        A killed process can start nothing more, so the group only waits for its memory to be freed.
        """
        self.kill()
        return self.remove_if_empty()

    def kill(self) -> None:
        """Send SIGKILL to every process of the group, the ones forked while it is being done included.

        A process with SIGKILL pending forks no more, so looking again until no process is new ends.
        """
        _write_if_there(self.memory / "cgroup.kill", "1")  # v2 (Linux 5.14): the whole group at once
        killed: set[int] = set()
        for _ in range(KILL_ROUNDS):
            new = set(self.processes()) - killed
            if not new:
                return
            for pid in new:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            killed |= new

    def remove_if_empty(self) -> bool:
        for folder in self.folders:
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                return False  # a process still dying: its group is ended again later
        return True


def _write(path: Path, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _write_if_there(path: Path, text: str) -> None:
    if path.exists():
        try:
            _write(path, text)
        except OSError:
            pass


def _counter(path: Path, key: str) -> int:
    """The value of `key` in a flat-keyed cgroup file ("key value" lines); 0 where it is missing."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return 0


_layout: Layout | None = None
_sequence = 0
_ending: list[KernelGroup] = []  # groups of ended kernels whose last process was still dying


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """Why kernels get no group here (None when they do): decided once per process, when its first kernel starts."""
    global _layout
    try:
        _layout = make_kit_group(find_layout())
    except (CgroupUnavailable, OSError) as error:
        return str(error)
    atexit.register(remove_kit_group, _layout)
    return None


def _forget_in_child() -> None:
    """A forked worker decides afresh: its parent's kit group and numbering are not its own."""
    global _layout, _sequence, _ending
    _layout, _sequence, _ending = None, 0, []
    unavailable_reason.cache_clear()


# Two workers forked from one process would otherwise both number their kernels k1, k2, … in the
# parent's group, and the second to start a kernel would find the first one's group there.
os.register_at_fork(after_in_child=_forget_in_child)


def kernel_group(memory_bytes: int, tasks: int = KERNEL_TASKS) -> KernelGroup | None:
    """A new, limited group for one kernel; None where this process can make none (see unavailable_reason)."""
    global _sequence
    if unavailable_reason() is not None or _layout is None:
        return None
    _ending[:] = [group for group in _ending if not group.end()]
    _sequence += 1
    group = KernelGroup(_layout, f"k{_sequence}")
    group.limit(memory_bytes, tasks)
    return group


def end_group(group: KernelGroup) -> None:
    """Kill an ended kernel's group at once; remove it now if it is empty, else when the next kernel starts.

    Waiting here for a killed kernel to free its memory cost each notebook tens of milliseconds.
    """
    if not group.end():
        _ending.append(group)


def remove_groups_of_ended_workers(parent: Path) -> None:
    """Remove the empty kit groups of workers that ended without removing theirs (killed, not exited)."""
    for group in parent.glob(f"{KIT_GROUP_PREFIX}*"):
        worker = group.name[len(KIT_GROUP_PREFIX) :]
        if not worker.isdigit() or Path(f"/proc/{worker}").exists():
            continue
        for folder in (*group.glob("k*"), group):
            try:
                folder.rmdir()
            except OSError:
                pass  # still holds a process, or not a group: left alone


def remove_kit_group(layout: Layout) -> None:
    """Remove the kit group and whatever kernel groups are left in it."""
    for folder in layout.folders:
        for child in folder.glob("k*") if folder.is_dir() else ():
            if child.is_dir():
                KernelGroup(dataclasses.replace(layout, memory=folder, pids=folder), child.name).remove()
        try:
            folder.rmdir()
        except OSError:
            pass
