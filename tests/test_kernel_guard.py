"""The grading kernel's guard, exercised directly: its hook is called here, never installed in the test process."""

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell  # watched by the guard: imported before it arms

from gradekit.sandbox.kernel_guard import ARM_EVENT, PROBE_EVENT, SECCOMP_ARCHES, Guard

GUARD_FILE = Path(__file__).resolve().parent.parent / "gradekit" / "sandbox" / "kernel_guard.py"


@pytest.fixture
def course_root(tmp_path):
    notebook_dir = tmp_path / "course" / "autograded" / "student" / "autograd"
    notebook_dir.mkdir(parents=True)
    (notebook_dir / "autograd_checks.py").write_text("")
    (tmp_path / "course" / "gradebook.db").write_text("")
    return tmp_path / "course"


@pytest.fixture
def guard(tmp_path, course_root):
    notebook_dir = course_root / "autograded" / "student" / "autograd"
    guard = Guard(
        str(tmp_path / "guard.jsonl"),
        (str(course_root),),
        (os.path.realpath(os.__file__),),
        str(notebook_dir),
        seal=False,
    )
    guard.hook(ARM_EVENT, ())
    return guard


def _log(tmp_path):
    return [json.loads(line) for line in (tmp_path / "guard.jsonl").read_text().splitlines()]


@pytest.mark.unit
def test_course_files_are_refused_and_logged_once(guard, course_root, tmp_path):
    for _ in range(2):
        with pytest.raises(PermissionError, match="accessed a course file"):
            guard.hook("open", (str(course_root / "gradebook.db"), "r", 0))
    assert _log(tmp_path)[1:] == [{"refused": "open", "reason": "accessed a course file (gradebook.db)"}]


@pytest.mark.unit
def test_the_notebook_folder_is_readable_except_its_notebooks(guard, course_root):
    notebook_dir = course_root / "autograded" / "student" / "autograd"
    guard.hook("open", (str(notebook_dir / "autograd_checks.py"), "r", 0))
    guard.hook("os.listdir", (str(notebook_dir),))
    with pytest.raises(PermissionError):
        guard.hook("open", (str(notebook_dir / "010_history.ipynb"), "r", 0))
    with pytest.raises(PermissionError):
        guard.hook("open", (str(notebook_dir / "torch.py"), "w", os.O_WRONLY | os.O_CREAT))


@pytest.mark.unit
def test_files_outside_the_course_and_descriptors_pass(guard, tmp_path):
    guard.hook("open", (os.__file__, "r", 0))
    guard.hook("open", (str(tmp_path / "scratch.txt"), "w", os.O_WRONLY))
    guard.hook("open", (3, "r", 0))


@pytest.mark.unit
def test_processes_databases_network_and_ctypes_are_refused(guard):
    for event in (
        "subprocess.Popen",
        "sqlite3.connect",
        "socket.connect",
        "ctypes.string_at",
        "os.fork",
        "gc.get_referrers",
    ):
        with pytest.raises(PermissionError):
            guard.hook(event, ())


@pytest.mark.unit
def test_an_unarmed_guard_lets_the_kernel_start(tmp_path, course_root):
    guard = Guard(str(tmp_path / "guard.jsonl"), (str(course_root),), (), str(course_root), seal=False)
    guard.hook("sqlite3.connect", (":memory:",))
    guard.hook("open", (str(course_root / "gradebook.db"), "r", 0))
    assert (tmp_path / "guard.jsonl").read_text() == ""


@pytest.mark.unit
def test_a_probe_reports_replaced_functions(guard, tmp_path):
    original = math.sqrt
    try:
        guard.hook(PROBE_EVENT, ("clean",))
        math.sqrt = lambda value: 4.0
        guard.hook(PROBE_EVENT, ("patched",))
    finally:
        math.sqrt = original
    probes = {record["probe"]: record["findings"] for record in _log(tmp_path) if "probe" in record}
    assert probes["clean"] == []
    assert probes["patched"] == ["math.sqrt was replaced"]


@pytest.mark.unit
def test_a_probe_reports_methods_added_to_tensors(guard, tmp_path):
    try:
        torch.Tensor.cheap_equal = lambda self, other: True
        guard.hook(PROBE_EVENT, ("added",))
    finally:
        del torch.Tensor.cheap_equal
    probes = {record["probe"]: record["findings"] for record in _log(tmp_path) if "probe" in record}
    assert probes["added"] == ["torch.Tensor.cheap_equal was added"]


@pytest.mark.unit
def test_other_processes_are_off_limits(guard):
    guard.hook("open", (f"/proc/{os.getpid()}/status", "r", 0))
    guard.hook("open", (f"/proc/{os.getpid()}", None, os.O_RDONLY))
    guard.hook("open", (f"/proc/{os.getppid()}/stat", "r", 0))  # what any process may read of another
    with pytest.raises(PermissionError, match="another process"):
        guard.hook("open", (f"/proc/{os.getppid()}/mem", "r+b", os.O_RDWR))
    # Its folder opened, a relative open (`fd/0` with `dir_fd`) would reach its private entries unseen.
    with pytest.raises(PermissionError, match="another process"):
        guard.hook("open", (f"/proc/{os.getppid()}", None, os.O_RDONLY))


@pytest.mark.nbgrader
def test_an_armed_kernel_can_start_no_program_and_leave_no_process_group(tmp_path):
    """The seccomp filter, tried on a child process: exec, setsid and setpgid all fail."""
    program = textwrap.dedent(f"""
        import os, runpy, subprocess
        assert runpy.run_path({str(GUARD_FILE)!r})["forbid_new_programs"]()
        refused = []
        for name, call in (("exec", lambda: subprocess.run(["/bin/true"])), ("setsid", os.setsid),
                           ("setpgid", lambda: os.setpgid(0, 0))):
            try:
                call()
            except PermissionError:
                refused.append(name)
        print(" ".join(refused), os.getpgrp() == {os.getpgrp()})
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["exec", "setsid", "setpgid", "True"]


@pytest.mark.unit
def test_both_architectures_refuse_the_same_calls():
    x86_64, aarch64 = (SECCOMP_ARCHES[machine][2] for machine in ("x86_64", "aarch64"))
    assert list(x86_64) == list(aarch64)
    assert len(set(x86_64.values())) == len(set(aarch64.values())) == len(x86_64)


# Each refused call with arguments that would work unfiltered; "pid" and "pidfd" stand for the parent and its pidfd.
REFUSED_CALLS = (
    ("pidfd_open", ("pid", 0)),
    ("pidfd_send_signal", ("pidfd", 0, 0, 0)),
    ("pidfd_getfd", ("pidfd", 0, 0)),
    ("process_vm_readv", ("self", 0, 0, 0, 0, 0)),
    ("unshare", (0,)),
    ("ptrace", (2, "pid", 0, 0)),  # PTRACE_PEEKDATA of a process not traced: ESRCH unfiltered
    ("mount", (0, 0, 0, 0, 0)),
    ("fsopen", (0, 0)),
    ("open_tree", (-100, 0, 0)),
    ("mount_setattr", (-1, 0, 0, 0, 0)),
    ("setns", (-1, 0)),
)


@pytest.mark.nbgrader
@pytest.mark.parametrize("filtered", [False, True], ids=["unfiltered", "filtered"])
def test_an_armed_kernel_reaches_no_other_process_and_no_namespace(filtered):
    """pidfd, ptrace, process_vm_* and the mount and namespace calls fail with EPERM once the filter is on.

    Unfiltered, the same calls work (a pidfd of the parent) or fail otherwise
    (a null address, no tracee), so each EPERM comes from the filter.
    """
    program = textwrap.dedent(f"""
        import ctypes, errno, os, platform, runpy
        guard = runpy.run_path({str(GUARD_FILE)!r})
        numbers = guard["SECCOMP_ARCHES"][platform.machine()][2]
        pidfd = os.pidfd_open(os.getppid())
        if {filtered!r}:
            assert guard["forbid_new_programs"]()
        libc = ctypes.CDLL(None, use_errno=True)
        stand_for = {{"pid": os.getppid(), "pidfd": pidfd, "self": os.getpid()}}
        outcome = []
        for name, arguments in {REFUSED_CALLS!r}:
            ctypes.set_errno(0)
            result = libc.syscall(numbers[name], *(stand_for.get(a, a) for a in arguments))
            outcome.append(name + ":" + ("EPERM" if result == -1 and ctypes.get_errno() == errno.EPERM else "other"))
        print(" ".join(outcome))
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    expected = "EPERM" if filtered else "other"
    unfiltered_eperm = set()  # refused to an unprivileged user anyway
    assert result.stdout.split() == [
        f"{name}:{'EPERM' if filtered or name in unfiltered_eperm else expected}" for name, _ in REFUSED_CALLS
    ]


@pytest.mark.nbgrader
@pytest.mark.parametrize("filtered", [False, True], ids=["unfiltered", "filtered"])
def test_an_armed_kernel_changes_nothing_of_how_it_is_scheduled(filtered):
    """Niceness, affinity and scheduling policy stay as the grader started the kernel: its run-queue wait is the machine's."""  # noqa: E501
    program = textwrap.dedent(f"""
        import os, runpy
        guard = runpy.run_path({str(GUARD_FILE)!r})
        if {filtered!r}:
            assert guard["forbid_new_programs"]()
        changes = {{
            "nice": lambda: os.setpriority(os.PRIO_PROCESS, 0, 19),
            "affinity": lambda: os.sched_setaffinity(0, {{min(os.sched_getaffinity(0))}}),
            "normal-policy": lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0)),
            "batch-policy": lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0)),
            # Last: only a privileged process may leave SCHED_IDLE once in it.
            "idle-policy": lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)),
        }}
        outcome = []
        for name, change in changes.items():
            try:
                change()
                outcome.append(name + ":changed")
            except PermissionError:
                outcome.append(name + ":refused")
        print(" ".join(outcome))
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    expected = "refused" if filtered else "changed"
    # The normal policy, as the messaging library sets it on each new thread, passes either way.
    assert result.stdout.split() == [
        f"nice:{expected}",
        f"affinity:{expected}",
        "normal-policy:changed",
        f"batch-policy:{expected}",
        f"idle-policy:{expected}",
    ]


@pytest.mark.nbgrader
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x32 calls exist on x86_64 only")
def test_an_armed_kernel_makes_no_x32_call():
    """An x32 call carries x86_64's audit arch but other numbers: refused whatever it is (here getpid)."""
    program = textwrap.dedent(f"""
        import ctypes, errno, runpy
        assert runpy.run_path({str(GUARD_FILE)!r})["forbid_new_programs"]()
        libc = ctypes.CDLL(None, use_errno=True)
        print(libc.syscall(0x40000000 | 39), ctypes.get_errno() == errno.EPERM)
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["-1", "True"]


@pytest.mark.nbgrader
def test_an_armed_kernel_reaches_no_network(tmp_path):
    """The same filter: no connect(), no datagram, raw or packet socket; bound TCP and socket pairs still work."""
    program = textwrap.dedent(f"""
        import runpy, socket
        listening = socket.socket()
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        assert runpy.run_path({str(GUARD_FILE)!r})["forbid_new_programs"]()
        outcome = []
        for name, call in (("connect", lambda: socket.create_connection(listening.getsockname(), timeout=2)),
                           ("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
                           ("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)),
                           ("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW)),
                           ("unix-datagram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)),
                           ("pair", socket.socketpair)):
            try:
                call()
                outcome.append(name + ":allowed")
            except PermissionError:
                outcome.append(name + ":refused")
        print(" ".join(outcome))
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "connect:refused",
        "udp:refused",
        "udp6:refused",
        "packet:refused",
        "unix-datagram:refused",
        "pair:allowed",
    ]


@pytest.mark.nbgrader
def test_a_kernel_may_signal_its_own_children_only(tmp_path):
    """ipykernel ends the kernel's children at shutdown; any other target stays refused."""
    program = textwrap.dedent(f"""
        import os, runpy, time
        guard_module = runpy.run_path({str(GUARD_FILE)!r})
        guard = guard_module["Guard"]({str(tmp_path / "guard.jsonl")!r}, (), (), {str(tmp_path)!r}, seal=False)
        guard.hook(guard_module["ARM_EVENT"], ())
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        def allowed(pid):
            try:
                guard.hook("os.kill", (pid, 0))
            except PermissionError:
                return False
            return True
        print(allowed(child), allowed(os.getppid()), allowed(os.getpid()), allowed(-1), allowed(0))
        os.kill(child, 9)
    """)
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, start_new_session=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False", "False", "False", "False"]


@pytest.mark.nbgrader
def test_an_armed_kernel_adds_no_audit_hook_of_its_own(tmp_path):
    """A student's hook could answer the guard's probe: once armed, Python drops it (silently) and the guard logs it."""
    program = textwrap.dedent(f"""
        import functools, runpy, sys
        guard_module = runpy.run_path({str(GUARD_FILE)!r})
        guard = guard_module["Guard"]({str(tmp_path / "guard.jsonl")!r}, (), (), {str(tmp_path)!r}, seal=False)
        sys.addaudithook(functools.partial(guard_module["audit_hook"], guard=guard))
        heard = []
        sys.addaudithook(lambda event, args: heard.append(event) if event == "kit.before" else None)
        sys.audit("kit.before")
        sys.audit(guard_module["ARM_EVENT"])
        sys.addaudithook(lambda event, args: heard.append(event) if event == "kit.after" else None)
        sys.audit("kit.after")
        print(" ".join(heard))
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["kit.before"]
    assert _log(tmp_path)[1:] == [{"refused": "sys.addaudithook", "reason": "added an audit hook"}]


@pytest.mark.nbgrader
@pytest.mark.parametrize("filtered", [False, True], ids=["unfiltered", "filtered"])
def test_an_armed_kernel_reserves_no_disk_past_a_file_it_holds(tmp_path, filtered):
    """fallocate (KEEP_SIZE, which the file-size limit does not count) is refused once the filter is on."""
    held = tmp_path / "guard.jsonl"
    held.touch()
    program = textwrap.dedent(f"""
        import ctypes, os, runpy
        descriptor = os.open({str(held)!r}, os.O_WRONLY | os.O_APPEND)
        if {filtered!r}:
            assert runpy.run_path({str(GUARD_FILE)!r})["forbid_new_programs"]()
        libc = ctypes.CDLL(None, use_errno=True)
        keep_size = 1
        result = libc.fallocate(descriptor, keep_size, ctypes.c_long(0), ctypes.c_long(2**20))
        print(result, ctypes.get_errno() if result else 0, os.fstat(descriptor).st_blocks * 512)
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    status, error, reserved = result.stdout.split()
    if filtered:
        assert (status, error, reserved) == ("-1", "1", "0")  # EPERM, and not a block reserved
    else:
        assert status == "0" and int(reserved) >= 2**20  # the file system does reserve it unfiltered


@pytest.mark.nbgrader
@pytest.mark.parametrize("filtered", [False, True], ids=["unfiltered", "filtered"])
def test_an_armed_kernel_makes_no_io_uring(filtered):
    """io_uring runs its own operations (fallocate, connect, ...) past every filter: making one is refused."""
    program = textwrap.dedent(f"""
        import ctypes, os, runpy
        if {filtered!r}:
            assert runpy.run_path({str(GUARD_FILE)!r})["forbid_new_programs"]()
        libc = ctypes.CDLL(None, use_errno=True)
        ring = libc.syscall(425, 4, ctypes.create_string_buffer(120))  # io_uring_setup(4 entries, no flags)
        print(ring >= 0, ctypes.get_errno() if ring < 0 else 0)
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == (["False", "1"] if filtered else ["True", "0"])  # EPERM once armed


@pytest.mark.nbgrader
@pytest.mark.parametrize("filtered", [False, True], ids=["unfiltered", "filtered"])
def test_an_armed_kernel_starts_threads_but_no_process(filtered):
    """fork, vfork, a clone that makes a process and fork_exec's preexec_fn route fail; threads still start."""
    program = textwrap.dedent(f"""
        import _posixsubprocess, ctypes, errno, os, platform, runpy, threading
        guard = runpy.run_path({str(GUARD_FILE)!r})
        if {filtered!r}:
            assert guard["forbid_new_programs"]()
        libc = ctypes.CDLL(None, use_errno=True)
        outcome = []
        def child_or_error(call):
            try:
                pid = call()
            except OSError as error:
                return errno.errorcode[error.errno]
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            return "forked"
        outcome.append("fork:" + child_or_error(os.fork))
        outcome.append("fork_exec:" + child_or_error(lambda: _posixsubprocess.fork_exec(
            [b'/bin/true'], [b'/bin/true'], True, (), None, None, -1, -1, -1, -1, -1, -1, *os.pipe(),
            True, False, -1, None, None, None, -1, lambda: os._exit(0), False)))
        for name in ("clone", "clone3"):
            ctypes.set_errno(0)
            number = guard["SECCOMP_ARCHES"][platform.machine()][4 if name == "clone" else 5]
            if name == "clone":  # SIGCHLD only: a new process, like fork
                pid = libc.syscall(number, 17, 0, 0, 0, 0)
            else:  # a struct of size 0: EINVAL unfiltered
                pid = libc.syscall(number, 0, 0)
            if pid == 0:
                os._exit(0)
            if pid > 0:
                os.waitpid(pid, 0)
            outcome.append(name + ":" + ("forked" if pid > 0 else errno.errorcode[ctypes.get_errno()]))
        ran = []
        thread = threading.Thread(target=lambda: ran.append(True))
        thread.start()
        thread.join()
        outcome.append("thread:" + ("ran" if ran else "not"))
        print(" ".join(outcome))
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    if filtered:
        expected = ["fork:EPERM", "fork_exec:EPERM", "clone:EPERM", "clone3:ENOSYS", "thread:ran"]
    else:
        expected = ["fork:forked", "fork_exec:forked", "clone:forked", "clone3:EINVAL", "thread:ran"]
    assert result.stdout.split() == expected


@pytest.mark.unit
def test_a_probe_reports_a_module_or_class_given_another_type(guard, tmp_path):
    """The module or class stays the same object with the same namespace; only its type answers lookups now."""

    class AlwaysClose(type(math)):
        def __getattribute__(self, name):
            return (lambda *args, **kwargs: True) if name == "isclose" else super().__getattribute__(name)

    class Lenient(type(InteractiveShell)):
        pass

    shell_type = type(InteractiveShell)
    try:
        math.__class__ = AlwaysClose
        assert math.isclose(1, 2)
        InteractiveShell.__class__ = Lenient
        guard.hook(PROBE_EVENT, ("retyped",))
    finally:
        math.__class__ = type(os)
        InteractiveShell.__class__ = shell_type
    probes = {record["probe"]: record["findings"] for record in _log(tmp_path) if "probe" in record}
    assert probes["retyped"] == [
        "the type of sys.modules['math'] was replaced",
        "the type of IPython.core.interactiveshell.InteractiveShell was replaced",
    ]


@pytest.mark.unit
def test_an_event_the_guard_cannot_judge_is_refused_and_logged_as_any_refusal(guard, tmp_path, monkeypatch):
    def confused(*args):
        raise RuntimeError("an argument the checks did not foresee")

    monkeypatch.setattr(guard, "path_reason", confused)
    for _ in range(2):
        with pytest.raises(PermissionError, match="confused the grading guard"):
            guard.hook("open", ("/anywhere", "r", 0))
    assert _log(tmp_path)[1:] == [{"refused": "open", "reason": "confused the grading guard"}]
    assert guard.refusals == 1
