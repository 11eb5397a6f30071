"""The kernel's memory and pids cgroup: v1 on this machine's real hierarchies, v2 on a file tree laid out like one."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradekit.grading import kernel_cgroups
from gradekit.grading.kernel_cgroups import CgroupUnavailable, KernelGroup, Layout, TreeEvents, find_layout

pytestmark = pytest.mark.notebook

MiB = 2**20


@pytest.fixture
def kit_layout():
    """This process's kit group on the machine's real hierarchies, removed afterwards."""
    if kernel_cgroups.unavailable_reason() is not None:
        pytest.fail(f"this grading machine makes no cgroup: {kernel_cgroups.unavailable_reason()}")
    layout = kernel_cgroups._layout
    assert layout is not None
    yield layout


def _run_in(group: KernelGroup, program: str) -> subprocess.CompletedProcess:
    """Run `program` in `group`: the child waits on stdin until it has been moved in."""
    waiting = f"import sys\nsys.stdin.readline()\n{textwrap.dedent(program)}"
    child = subprocess.Popen([sys.executable, "-c", waiting], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    group.add(child.pid)
    out, _ = child.communicate("go\n", timeout=120)
    return subprocess.CompletedProcess(child.args, child.returncode, out)


# Four children forked without exec, each filling what an address-space cap per process would leave it.
FORKS_THAT_FILL_MEMORY = """
    import os, time
    children = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            hoard = bytearray(150 * 2**20)
            time.sleep(5)
            os._exit(0)
        children.append(pid)
    killed = sum(os.WIFSIGNALED(os.waitpid(pid, 0)[1]) for pid in children)
    print("killed", killed)
"""


def test_a_kernels_children_share_one_memory_limit_and_the_oom_kill_is_counted(kit_layout):
    group = kernel_cgroups.kernel_group(256 * MiB)
    assert group is not None
    try:
        result = _run_in(group, FORKS_THAT_FILL_MEMORY)
        assert result.returncode == 0
        killed = int(result.stdout.split()[1])
        assert killed >= 2  # 600 MiB asked for under 256 MiB: at most one child keeps its hoard
        assert group.events().out_of_memory >= 1 and group.events().too_many_tasks == 0
        assert 0 < group.peak_bytes() <= 256 * MiB
    finally:
        group.remove()
    assert not any(folder.exists() for folder in group.folders)


def test_a_fork_bomb_stops_at_the_task_limit_and_is_counted(kit_layout):
    group = kernel_cgroups.kernel_group(256 * MiB, tasks=16)
    assert group is not None
    try:
        result = _run_in(
            group,
            """
            import os, time
            started = refused = 0
            for _ in range(40):
                try:
                    pid = os.fork()
                except BlockingIOError:
                    refused += 1
                    continue
                if pid == 0:
                    os.close(1)  # the test reads the parent's output to its end: a sleeper must not hold it open
                    time.sleep(30)
                    os._exit(0)
                started += 1
            print(started, refused)
            """,
        )
        started, refused = map(int, result.stdout.split())
        assert (started, refused) == (15, 25)  # the parent is the 16th task
        assert group.events() == TreeEvents(out_of_memory=0, too_many_tasks=25)
    finally:
        group.remove()  # the sleeping children are killed with their group
    assert group.processes() == [] and not any(folder.exists() for folder in group.folders)


def test_threads_count_as_tasks(kit_layout):
    group = kernel_cgroups.kernel_group(256 * MiB, tasks=32)
    assert group is not None
    try:
        result = _run_in(
            group,
            """
            import threading
            threading.stack_size(64 * 1024)
            stop, started = threading.Event(), 0
            try:
                while True:
                    threading.Thread(target=stop.wait, daemon=True).start()
                    started += 1
            except RuntimeError:
                print(started)
            stop.set()
            """,
        )
        assert int(result.stdout) == 31
        assert group.events().too_many_tasks == 1
    finally:
        group.remove()


def test_an_ended_kernels_group_is_killed_at_once_and_removed_by_the_next_kernels_start(kit_layout, monkeypatch):
    """The grader does not wait for a killed kernel to free its memory: its group goes once it is empty."""
    group = kernel_cgroups.kernel_group(256 * MiB)
    assert group is not None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    group.add(child.pid)
    end, looked = KernelGroup.end, []

    def first_look_finds_it_dying(self):  # as a kernel with much memory to free usually is
        if looked:
            return end(self)
        looked.append(self)
        self.kill()
        return False

    monkeypatch.setattr(KernelGroup, "end", first_look_finds_it_dying)
    kernel_cgroups.end_group(group)
    assert child.wait(timeout=10) == -9  # killed when its kernel ended, not later
    assert any(folder.exists() for folder in group.folders)  # kept for later: it was still dying
    following = kernel_cgroups.kernel_group(256 * MiB)
    assert following is not None
    following.remove()
    assert not any(folder.exists() for folder in group.folders)


def _v2_tree(root: Path) -> None:
    (root / "grader.scope").mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu memory pids io\n")


def test_v2_is_found_below_the_graders_own_group_and_gets_its_limits(tmp_path):
    _v2_tree(tmp_path)
    layout = find_layout(tmp_path, "0::/grader.scope\n", name="gradekit-7")
    assert layout == Layout(2, tmp_path / "grader.scope" / "gradekit-7", tmp_path / "grader.scope" / "gradekit-7")
    kernel_cgroups.make_kit_group(layout)
    assert (tmp_path / "grader.scope" / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (layout.memory / "cgroup.subtree_control").read_text() == "+memory +pids"
    group = KernelGroup(layout, "k1")
    group.limit(3 * 2**30, 64)
    written = {name: (layout.memory / "k1" / name).read_text() for name in ("memory.max", "pids.max")}
    assert written == {"memory.max": str(3 * 2**30), "pids.max": "64"}
    (layout.memory / "k1" / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 2\noom_kill 1\noom_group_kill 1\n")
    (layout.memory / "k1" / "pids.events").write_text("max 3\n")
    assert group.events() == TreeEvents(out_of_memory=1, too_many_tasks=3)


def test_v1_puts_each_controller_below_the_graders_own_group(tmp_path):
    for controller in ("memory", "pids"):
        (tmp_path / controller).mkdir()
        (tmp_path / controller / "cgroup.procs").write_text("")
    proc = "4:memory:/session/abc\n8:pids:/\n0::/\n"
    layout = find_layout(tmp_path, proc, name="gradekit-7")
    assert layout == Layout(1, tmp_path / "memory" / "session" / "abc" / "gradekit-7", tmp_path / "pids" / "gradekit-7")


def test_a_machine_without_the_controllers_says_why(tmp_path):
    with pytest.raises(CgroupUnavailable, match="no cgroup v2 nor v1 memory and pids hierarchies"):
        find_layout(tmp_path, "0::/\n")
    (tmp_path / "cgroup.controllers").write_text("cpu io\n")
    with pytest.raises(CgroupUnavailable, match=r"offers no memory and pids controllers here \(cpu io\)"):
        find_layout(tmp_path, "0::/\n")


def test_the_empty_groups_of_workers_that_ended_are_removed_and_no_other(tmp_path):
    ended, alive, other = tmp_path / "gradekit-999999999", tmp_path / f"gradekit-{os.getpid()}", tmp_path / "other"
    for folder in (ended / "k1", alive / "k1", other):
        folder.mkdir(parents=True)
    kernel_cgroups.remove_groups_of_ended_workers(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == [alive.name, "other"]
    assert (alive / "k1").is_dir()


def test_workers_forked_from_one_process_each_make_their_own_kit_group(kit_layout):
    """The parent's group and numbering are not inherited: two forked workers' first kernels never collide."""
    first = kernel_cgroups.kernel_group(64 * MiB)
    assert first is not None
    children = {}
    for _ in range(2):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # a worker: make a kernel group, say where, remove it
            os.close(read_end)
            try:
                group = kernel_cgroups.kernel_group(64 * MiB)
                assert group is not None and kernel_cgroups._layout is not None
                said = str(group.memory)
                group.remove()
                kernel_cgroups.remove_kit_group(kernel_cgroups._layout)
            except Exception as error:  # the parent reads it and fails the test
                said = f"error: {error}"
            os.write(write_end, said.encode())
            os._exit(0)
        os.close(write_end)
        children[pid] = read_end
    made = {}
    for pid, read_end in children.items():
        os.waitpid(pid, 0)
        with os.fdopen(read_end) as said:
            made[pid] = said.read()
    first.remove()
    for pid, where in made.items():
        assert Path(where).parent.name == f"{kernel_cgroups.KIT_GROUP_PREFIX}{pid}", made
    assert len(set(made.values())) == 2
