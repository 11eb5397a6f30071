"""deploy/student_limits.py: each student's server held to its account's cgroup; v1 for real here, v2 on a file tree."""

import contextlib
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradekit.core.course import REPO_ROOT

MiB = 2**20


def _load_module():
    """Loaded by path, as deploy/jupyterhub_config.py loads it."""
    spec = importlib.util.spec_from_file_location(
        "student_limits_under_test", REPO_ROOT / "deploy" / "student_limits.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


student_limits = _load_module()
LIMITS = student_limits.StudentLimits(memory_bytes=256 * MiB, tasks=64, cpu_cores=0.5, niceness=5)


def _v2_tree(tmp_path: Path, controllers: str = "cpuset cpu io memory pids") -> Path:
    (tmp_path / "cgroup.controllers").write_text(controllers + "\n")
    (tmp_path / "hub.scope").mkdir()
    return tmp_path


@pytest.mark.unit
def test_v2_puts_each_student_below_the_hubs_own_group_with_memory_tasks_and_cpu(tmp_path):
    root = _v2_tree(tmp_path)
    groups = student_limits.find_groups(root, "0::/hub.scope\n")
    procs = groups.prepare("s1234", LIMITS)
    folder = root / "hub.scope" / student_limits.HUB_GROUP / "s1234"
    assert procs == (folder / "cgroup.procs",)
    assert (folder / "memory.max").read_text() == str(256 * MiB)
    assert (folder / "pids.max").read_text() == "64"
    assert (folder / "cpu.max").read_text() == "50000 100000"
    assert (root / "hub.scope" / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"


@pytest.mark.unit
def test_v1_puts_each_student_in_each_controllers_hierarchy(tmp_path):
    for controller in student_limits.V1_CONTROLLERS:
        (tmp_path / controller / "hub").mkdir(parents=True)
        (tmp_path / controller / "cgroup.procs").write_text("")
    own = "4:memory:/hub\n8:pids:/hub\n1:cpu:/hub\n"
    procs = student_limits.find_groups(tmp_path, own).prepare("s1234", LIMITS)
    group = {c: tmp_path / c / "hub" / student_limits.HUB_GROUP / "s1234" for c in student_limits.V1_CONTROLLERS}
    assert set(procs) == {folder / "cgroup.procs" for folder in group.values()}
    assert (group["memory"] / "memory.limit_in_bytes").read_text() == str(256 * MiB)
    assert (group["pids"] / "pids.max").read_text() == "64"
    assert (group["cpu"] / "cpu.cfs_quota_us").read_text() == "50000"


@pytest.mark.unit
def test_a_machine_without_the_controllers_says_which_are_missing(tmp_path):
    with pytest.raises(student_limits.LimitsUnavailable, match="no cpu controller"):
        student_limits.find_groups(_v2_tree(tmp_path, "memory pids"), "0::/hub.scope\n")
    assert "no v1 hierarchy for memory, pids, cpu" in student_limits.unavailable_reason(tmp_path / "empty")


# A kernel gone wild: it asks for a gigabyte, four times its account's limit, a page at a time.
RUNAWAY = """
    block = bytearray(1024 * 2**20)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    print("survived")
"""
# A classmate's honest check at the same moment, in their own account's group.
HONEST = """
    block = bytearray(64 * 2**20)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    print(sum(block[::4096]))
"""


@pytest.fixture
def real_groups():
    """Two students' groups on this machine's real hierarchies (the hub's layout), removed afterwards."""
    reason = student_limits.unavailable_reason()
    if reason is not None:
        pytest.fail(f"this machine makes no per-student group: {reason}")
    groups = student_limits.find_groups()
    names = ("kit-limits-runaway", "kit-limits-honest")
    yield groups, names
    for name in names:
        for folder in groups.folders_of(name).values():
            if folder.exists():
                folder.rmdir()
    for parent in groups.parents.values():
        with contextlib.suppress(OSError):  # kept where a running hub's students are in it
            parent.rmdir()


def _times_out_of_memory(groups, name: str) -> int:
    """How often the account's group hit its memory limit (v1's failcnt, v2's max events)."""
    folders = groups.folders_of(name)
    if groups.version == 1:
        return int((folders["memory"] / "memory.failcnt").read_text())
    events = dict(line.split() for line in (folders[""] / "memory.events").read_text().splitlines())
    return int(events["max"])


@pytest.mark.notebook
def test_a_runaway_kernel_is_killed_in_its_own_group_and_a_classmates_check_runs_on(real_groups):
    groups, (runaway, honest) = real_groups
    started = {}
    for name, program in ((runaway, RUNAWAY), (honest, HONEST)):
        procs = groups.prepare(name, LIMITS)
        started[name] = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(program)],
            preexec_fn=lambda procs=procs: student_limits.join(procs, LIMITS.niceness),
            stdout=subprocess.PIPE,
            text=True,
        )
    outputs = {name: process.communicate(timeout=120) for name, process in started.items()}
    assert started[runaway].returncode == -9 and "survived" not in outputs[runaway][0]
    assert started[honest].returncode == 0 and outputs[honest][0].strip() == str(64 * MiB // 4096)
    assert _times_out_of_memory(groups, runaway) > 0  # the account's limit, not the machine's, stopped it
    assert _times_out_of_memory(groups, honest) == 0
