"""Landlock confinement of a grading kernel, tried on a child process (never on the test process)."""

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradekit.sandbox.kernel_sandbox import readable_outside

SANDBOX = Path(__file__).resolve().parent.parent / "gradekit" / "sandbox" / "kernel_sandbox.py"


@pytest.mark.unit
def test_readable_outside_covers_everything_but_the_protected_roots(tmp_path):
    protected = tmp_path / "course"
    (protected / "source").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "note.txt").write_text("")
    (tmp_path / "shortcut").symlink_to(tmp_path)  # a link to an ancestor would open up everything
    found = readable_outside([str(protected)])
    assert str(tmp_path / "elsewhere") in found and str(tmp_path / "note.txt") in found
    assert not any(path == str(protected) or path.startswith(str(protected) + "/") for path in found)
    assert "/" not in found and str(tmp_path) not in found  # ancestors are opened up entry by entry
    assert str(tmp_path / "shortcut") not in found


@pytest.mark.nbgrader
def test_a_confined_process_cannot_open_course_files_even_from_c(tmp_path):
    course = tmp_path / "course"
    notebook_dir = course / "autograded" / "student"
    notebook_dir.mkdir(parents=True)
    (course / "gradebook.db").write_text("grades")
    (notebook_dir / "autograd_checks.py").write_text("helpers")
    (notebook_dir / "010_history.ipynb").write_text("hidden tests")
    private_tmp = tmp_path / "private"
    private_tmp.mkdir()
    program = textwrap.dedent(f"""
        import os, runpy, sys
        confine = runpy.run_path({str(SANDBOX)!r})["confine"]
        assert confine([{str(course)!r}], [sys.prefix, sys.base_prefix], {str(notebook_dir)!r}, {str(private_tmp)!r})
        def can_read(path):
            try:
                fd = os.open(path, os.O_RDONLY)  # os.open goes straight to the system call
            except PermissionError:
                return False
            os.close(fd)
            return True
        print(can_read({str(course / "gradebook.db")!r}), can_read({str(notebook_dir / "010_history.ipynb")!r}),
              can_read({str(notebook_dir / "autograd_checks.py")!r}), can_read("/etc/hostname"))
        try:
            open({str(tmp_path / "outside.txt")!r}, "w")
            print("wrote outside")
        except PermissionError:
            print("writes outside refused")
        open(os.path.join({str(private_tmp)!r}, "scratch.txt"), "w").write("ok")
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr  # Landlock must be there: the grader relies on it
    assert result.stdout.split("\n")[:2] == ["False False True True", "writes outside refused"]
    assert (private_tmp / "scratch.txt").read_text() == "ok"


@pytest.mark.nbgrader
def test_a_confined_process_writes_nothing_the_next_kernel_could_read(tmp_path):
    """Of /dev only /dev/null is writable: /dev/shm and /tmp would carry a note to the next student."""
    private_tmp = tmp_path / "private"
    private_tmp.mkdir()
    program = textwrap.dedent(f"""
        import os, runpy, sys
        confine = runpy.run_path({str(SANDBOX)!r})["confine"]
        assert confine([{str(tmp_path / "course")!r}], [sys.prefix], {str(tmp_path)!r}, {str(private_tmp)!r})
        def can_write(path):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            except PermissionError:
                return False
            os.close(fd)
            os.unlink(path) if path != os.devnull else None
            return True
        def can_read(path):
            with open(path, "rb") as handle:
                return len(handle.read(8)) == 8
        print(can_write("/dev/null"), can_write("/dev/shm/kit-sandbox-test-{os.getpid()}"),
              can_write("/tmp/kit-sandbox-test-{os.getpid()}"), can_write(os.path.join({str(private_tmp)!r}, "note")),
              can_read("/dev/urandom"))
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False", "False", "True", "True"]


@pytest.mark.nbgrader
def test_a_confined_process_cannot_read_another_processes_environment(tmp_path):
    """/proc/<parent>/environ (where a grader's gradebook password would be) is refused; its own entry is not."""
    private_tmp = tmp_path / "private"
    private_tmp.mkdir()
    program = textwrap.dedent(f"""
        import os, runpy, sys
        confine = runpy.run_path({str(SANDBOX)!r})["confine"]
        assert confine([], [sys.prefix, sys.base_prefix], {str(tmp_path)!r}, {str(private_tmp)!r})
        def can_read(path):
            try:
                fd = os.open(path, os.O_RDONLY)
            except PermissionError:
                return False
            os.close(fd)
            return True
        print(can_read(f"/proc/{{os.getppid()}}/environ"), can_read("/proc/1/cmdline"),
              can_read("/proc/self/status"), can_read("/proc/cpuinfo"))
    """)
    result = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KIT_TEST_SECRET": "not for kernels"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "True", "True"]


@pytest.mark.nbgrader
def test_a_confined_process_makes_sockets_and_fifos_in_its_private_folder_only(tmp_path):
    """A FIFO or socket at a classmate's path (or where the grader will write) is refused; devices everywhere."""
    private_tmp = tmp_path / "private"
    private_tmp.mkdir()
    program = textwrap.dedent(f"""
        import errno, os, runpy, socket, stat, sys
        confine = runpy.run_path({str(SANDBOX)!r})["confine"]
        assert confine([], [sys.prefix, sys.base_prefix], {str(tmp_path)!r}, {str(private_tmp)!r})
        def outcome(make, path):
            try:
                make(path)
            except OSError as error:
                return errno.errorcode[error.errno]
            return "made"
        def bind(path):
            socket.socket(socket.AF_UNIX).bind(path)
        def device(path):
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        for folder in ({str(tmp_path)!r}, {str(private_tmp)!r}):
            print(outcome(os.mkfifo, os.path.join(folder, "pipe")), outcome(bind, os.path.join(folder, "socket")),
                  outcome(device, os.path.join(folder, "null")))
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # EACCES is Landlock's answer; unconfined, a device is made (by root) or refused with EPERM.
    assert result.stdout.splitlines() == ["EACCES EACCES EACCES", "made made EACCES"]
    assert not (tmp_path / "pipe").exists() and not (tmp_path / "socket").exists()


@pytest.mark.nbgrader
def test_a_confined_process_lists_its_socket_folder_and_makes_nothing_there(tmp_path):
    """The second layer under the read-only mount: a boxed kernel's sockets are bound before it is confined."""
    private_tmp, sockets = tmp_path / "private", tmp_path / "sockets"
    private_tmp.mkdir()
    sockets.mkdir()
    (sockets / "k-1").touch()
    program = textwrap.dedent(f"""
        import errno, os, runpy, socket, sys
        confine = runpy.run_path({str(SANDBOX)!r})["confine"]
        assert confine([], [sys.prefix, sys.base_prefix], {str(tmp_path)!r}, {str(private_tmp)!r}, {str(sockets)!r})
        def outcome(make):
            try:
                make()
            except OSError as error:
                return errno.errorcode[error.errno]
            return "made"
        folder = {str(sockets)!r}
        print(os.listdir(folder) == ["k-1"],
              outcome(lambda: open(os.path.join(folder, "file"), "w")),
              outcome(lambda: socket.socket(socket.AF_UNIX).bind(os.path.join(folder, "extra"))),
              outcome(lambda: os.mkdir(os.path.join(folder, "more"))),
              outcome(lambda: os.unlink(os.path.join(folder, "k-1"))))
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "EACCES", "EACCES", "EACCES", "EACCES"]
    assert sorted(path.name for path in sockets.iterdir()) == ["k-1"]


@pytest.mark.nbgrader
def test_a_confined_process_signals_its_descendants_only_and_reaches_no_outside_abstract_socket(tmp_path):
    """Landlock's scopes (ABI 6 on): no signal to the parent, no connection to the parent's abstract socket."""
    private_tmp = tmp_path / "private"
    private_tmp.mkdir()
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(f"\0kit-sandbox-test-{os.getpid()}")
    listening.listen()
    program = textwrap.dedent(f"""
        import ctypes, os, runpy, socket, sys, time
        sandbox = runpy.run_path({str(SANDBOX)!r})
        assert ctypes.CDLL(None).syscall(444, None, 0, 1) >= sandbox["SCOPED_ABI"]
        assert sandbox["confine"]([], [sys.prefix, sys.base_prefix], {str(tmp_path)!r}, {str(private_tmp)!r})
        def allowed(call):
            try:
                call()
            except PermissionError:
                return "refused"
            return "allowed"
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        print(allowed(lambda: os.kill(os.getppid(), 0)), allowed(lambda: os.kill(child, 0)),
              allowed(lambda: socket.socket(socket.AF_UNIX).connect({listening.getsockname()!r})))
        os.kill(child, 9)
    """)
    try:
        result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    finally:
        listening.close()
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["refused", "allowed", "refused"]
