"""What the operating system holds each student's server to on the hub: memory, tasks and CPU, per account.

A student's server and every kernel it starts run in one cgroup of that account
(cgroup v2, or v1's `memory`, `pids` and `cpu` hierarchies), made by the hub
below the group the hub itself runs in: a runaway kernel is OOM-killed inside its
own account's group, and the machine, the pre-check and the other students keep
their memory. CPU is held twice: a quota per account (a share of the cores) and a
niceness, so the pre-check's grading processes and the course team's servers,
which run at the hub's own priority, come first when the cores are busy.

Where no group can be made (no controllers, or not writable), the servers start
without these limits and `unavailable_reason` says why; the hub logs it.
deploy/jupyterhub_config.py loads this file by its path, so it imports nothing of the kit.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
HUB_GROUP = "kit-hub-students"
CPU_PERIOD_US = 100_000
V1_CONTROLLERS = ("memory", "pids", "cpu")


@dataclasses.dataclass(frozen=True)
class StudentLimits:
    """One student's share of the machine."""

    memory_bytes: int = 2 * 2**30  # the server, a kernel with torch, and room for its work
    tasks: int = 256  # processes and threads of the server and its kernels
    cpu_cores: float = 1.0  # the most of the cores one account may take at once
    niceness: int = 5  # below the pre-check's processes, which run at the hub's priority


class LimitsUnavailable(OSError):
    """No per-student group can be made here; the message says why."""


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """Controller ("" for v2) -> the hub's own group path, from /proc/self/cgroup's lines."""
    paths = {}
    for line in proc_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


@dataclasses.dataclass(frozen=True)
class StudentGroups:
    """Where the students' groups go: one folder per controller (v1) or one for all (v2)."""

    version: int
    parents: dict[str, Path]  # controller ("" for v2) -> the hub's students' folder

    def folders_of(self, username: str) -> dict[str, Path]:
        return {controller: parent / username for controller, parent in self.parents.items()}

    def prepare(self, username: str, limits: StudentLimits) -> tuple[Path, ...]:
        """Make the account's group with its limits; the files a process writes itself into to join it."""
        folders = self.folders_of(username)
        for folder in folders.values():
            folder.mkdir(parents=True, exist_ok=True)
        if self.version == 2:
            _write_limits_v2(folders[""], limits)
        else:
            _write_limits_v1(folders, limits)
        return tuple(folder / "cgroup.procs" for folder in folders.values())


def _write_limits_v2(folder: Path, limits: StudentLimits) -> None:
    _write(folder / "memory.max", str(limits.memory_bytes))
    _write(folder / "pids.max", str(limits.tasks))
    _write(folder / "cpu.max", f"{int(limits.cpu_cores * CPU_PERIOD_US)} {CPU_PERIOD_US}")


def _write_limits_v1(folders: dict[str, Path], limits: StudentLimits) -> None:
    _write(folders["memory"] / "memory.limit_in_bytes", str(limits.memory_bytes))
    _write(folders["pids"] / "pids.max", str(limits.tasks))
    _write(folders["cpu"] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
    _write(folders["cpu"] / "cpu.cfs_quota_us", str(int(limits.cpu_cores * CPU_PERIOD_US)))


def find_groups(root: Path = CGROUP_ROOT, proc_cgroup: str | None = None) -> StudentGroups:
    """The students' groups below the hub's own, v2 first; raises LimitsUnavailable where there are none."""
    own = _own_paths(proc_cgroup if proc_cgroup is not None else Path("/proc/self/cgroup").read_text())
    offered = root / "cgroup.controllers"
    if offered.exists():
        missing = {"memory", "pids", "cpu"} - set(offered.read_text().split())
        if missing:
            raise LimitsUnavailable(f"cgroup v2 here offers no {', '.join(sorted(missing))} controller")
        parent = root / own.get("", "/").lstrip("/")
        _write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
        students = parent / HUB_GROUP
        students.mkdir(exist_ok=True)
        _write(students / "cgroup.subtree_control", "+memory +pids +cpu")
        return StudentGroups(2, {"": students})
    missing = [c for c in V1_CONTROLLERS if not (root / c / "cgroup.procs").exists()]
    if missing:
        raise LimitsUnavailable(f"no cgroup v2, and no v1 hierarchy for {', '.join(missing)} under {root}")
    parents = {c: root / c / own.get(c, "/").lstrip("/") / HUB_GROUP for c in V1_CONTROLLERS}
    for folder in parents.values():
        folder.mkdir(exist_ok=True)
    return StudentGroups(1, parents)


def join(procs_files: tuple[Path, ...], niceness: int) -> None:
    """Move the calling process into its account's groups and lower its priority (in the server's child, as root)."""
    for procs in procs_files:
        _write(procs, str(os.getpid()))
    os.nice(niceness)


def _write(path: Path, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def unavailable_reason(root: Path = CGROUP_ROOT) -> str | None:
    """Why the students' servers would run without these limits here, or None if they will not."""
    try:
        find_groups(root)
    except OSError as error:
        return str(error)
    return None
