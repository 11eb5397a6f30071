"""A forked kernel's box, seen from inside: what it may see, write and reach, and what it leaves behind."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from gradekit.core.course import REPO_ROOT
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.grading import warm_kernels, worker_box
from gradekit.grading.warm_kernels import WarmKernelManager

pytestmark = pytest.mark.notebook

# An unguarded kernel (ctypes allowed): only the box stands between it and the machine.
PROBE = """
import ctypes, errno, json, os, socket, sys

def attempt(action):
    try:
        action()
        return "done"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))

folder = os.path.dirname(sys.argv[sys.argv.index("-f") + 1])
mailbox = os.path.join(folder, "mailbox")
reply = os.path.join(mailbox, "reply")
log = os.path.join(mailbox, "guard.jsonl")
sockets = os.path.join(folder, "sockets")
libc = ctypes.CDLL(None, use_errno=True)

def raw(call):
    return "done" if call() >= 0 else errno.errorcode[ctypes.get_errno()]

facts = {
    "uid": os.getuid(),
    "pid": os.getpid(),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "tmp": sorted(os.listdir("/tmp")),
    "shm": sorted(os.listdir("/dev/shm")),
    "kernel_folders": sorted(os.listdir(os.path.dirname(folder))),
    "course_visible": os.path.exists(os.environ["PROBE_COURSE"]),
    "write_tmp": attempt(lambda: open("/tmp/probe-note", "w").write("for the next kernel")),
    "file_in_box_root": attempt(lambda: open("/probe-note", "w")),
    "folder_in_etc": attempt(lambda: os.mkdir("/etc/probe-folder")),
    "create_in_mailbox": attempt(lambda: open(os.path.join(mailbox, "extra"), "w")),
    "rename_reply": attempt(lambda: os.rename(reply, reply + ".old")),
    "remove_reply": attempt(lambda: os.unlink(reply)),
    "fifo_in_mailbox": attempt(lambda: os.mkfifo(os.path.join(mailbox, "pipe"))),
    "write_reply": attempt(lambda: open(reply, "r+b").write(b"an answer")),
    "link_reply": attempt(lambda: os.link(reply, os.path.join(mailbox, "twin"))),
    "remove_request": attempt(lambda: os.unlink(os.path.join(mailbox, "request"))),
    "handoff": sorted(os.listdir("/kit")),
    "create_in_handoff": attempt(lambda: open("/kit/extra", "w")),
    "fifo_in_handoff": attempt(lambda: os.mkfifo("/kit/pipe")),
    "folder_in_handoff": attempt(lambda: os.mkdir("/kit/more")),
    "grow_reply": attempt(lambda: os.pwrite(os.open(reply, os.O_WRONLY), b"x", int(os.environ["PROBE_CAP"]))),
    "grow_log": attempt(lambda: os.pwrite(os.open(log, os.O_WRONLY), b"x", int(os.environ["PROBE_CAP"]))),
    "file_in_socket_folder": attempt(lambda: open(os.path.join(sockets, "file"), "w")),
    "socket_in_socket_folder": attempt(lambda: socket.socket(socket.AF_UNIX).bind(os.path.join(sockets, "extra"))),
    "folder_in_socket_folder": attempt(lambda: os.mkdir(os.path.join(sockets, "more"))),
    "remove_kernel_socket": attempt(lambda: os.unlink(os.path.join(sockets, sorted(os.listdir(sockets))[0]))),
    "kernel_sockets": len(os.listdir(sockets)),
    "reserve_past_reply": raw(lambda: libc.fallocate(os.open(reply, os.O_WRONLY), 1, ctypes.c_long(0),
                                                     ctypes.c_long(400 * 2**20))),
    "io_uring": raw(lambda: libc.syscall(425, 4, ctypes.create_string_buffer(120))),
    "reply_blocks": os.stat(reply).st_blocks,
    "reply_bytes": os.stat(reply).st_size,
    "connect": attempt(lambda: socket.create_connection(("127.0.0.1", int(os.environ["PROBE_PORT"])), timeout=2)),
    "unmount_mailbox": libc.umount2(mailbox.encode(), 2) == 0,
    "unmount_tmp": libc.umount2(b"/tmp", 2) == 0,
}
print(json.dumps(facts))
"""


@pytest.fixture
def listener():
    """A TCP server on this machine's loopback: a kernel with a network of its own cannot reach it."""
    server = socket.create_server(("127.0.0.1", 0))
    yield server.getsockname()[1]
    server.close()


def _run_probe(folder: Path, env: dict) -> dict:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)])
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        kernel_manager_class=WarmKernelManager,
        resources={"metadata": {"path": str(folder)}},
        timeout=60,
    )
    with client.setup_kernel(env=env):
        client.execute_cell(notebook.cells[0], 0)
    return json.loads(notebook.cells[0].outputs[0]["text"])


def test_a_kernel_sees_only_its_own_box(tmp_path, listener):
    course = tmp_path / "course-with-hidden-tests"
    course.mkdir()
    env = dict(_probe_env(tmp_path, listener), PROBE_COURSE=str(course))
    seen = _run_probe(tmp_path, env)
    assert seen["uid"] == 65534
    assert seen["processes"] == sorted({1, seen["pid"]})  # its zygote and itself: no worker, no other kernel
    # A tmpfs of its own: IPython's folder, and the paths of its own folder and its notebook's, made in it,
    # and the read-only views of the kit and Python put back where they lie below /tmp (a clone kept there).
    kept = {
        Path(view).parts[2]
        for view in worker_box.read_only_views()
        if Path(view).parts[1:2] == ("tmp",) and len(Path(view).parts) > 2
    }
    made_here = {"ipython", warm_kernels.zygote().kernels_root.parts[2], tmp_path.parts[2], *kept}
    assert set(seen["tmp"]) <= made_here
    assert seen["shm"] == []
    assert len(seen["kernel_folders"]) == 1  # its own folder, none of another kernel's
    assert not seen["course_visible"]
    assert seen["connect"] == "ENETUNREACH"
    assert not seen["unmount_mailbox"] and not seen["unmount_tmp"]


def _probe_env(tmp_path, listener):
    return dict(
        grading_environment(),
        PROBE_COURSE=str(tmp_path),
        PROBE_PORT=str(listener),
        PROBE_CAP=str(warm_kernels.KERNEL_FILE_BYTES),
    )


def test_a_kernel_writes_only_its_reply_in_its_mailbox(tmp_path, listener):
    # The probe's kernel is unguarded: no Landlock, no seccomp. The mounts alone refuse these.
    seen = _run_probe(tmp_path, _probe_env(tmp_path, listener))
    for action in ("create_in_mailbox", "rename_reply", "remove_reply", "fifo_in_mailbox", "link_reply"):
        assert seen[action] == "EROFS", action
    assert seen["remove_request"] == "EROFS"
    assert seen["write_reply"] == "done"


def test_a_kernel_makes_nothing_in_its_socket_folder(tmp_path, listener):
    # Its five Jupyter sockets were bound before the folder turned read-only: no file, socket or
    # folder can be added there, on the grader's disk, and none of its sockets removed; mounts alone.
    seen = _run_probe(tmp_path, _probe_env(tmp_path, listener))
    for action in (
        "file_in_socket_folder",
        "socket_in_socket_folder",
        "folder_in_socket_folder",
        "remove_kernel_socket",
    ):
        assert seen[action] == "EROFS", action
    assert seen["kernel_sockets"] == 5


def test_a_kernel_leaves_nothing_on_its_boxs_root_for_the_kernels_after_it(tmp_path, listener):
    # The root of the worker's box (and its /etc, where IPython reads every kernel's system-wide
    # configuration) is one file system for the warm parent and all its kernels; mounts alone.
    seen = _run_probe(tmp_path, _probe_env(tmp_path, listener))
    assert seen["file_in_box_root"] == "EROFS" and seen["folder_in_etc"] == "EROFS"


def test_the_handoff_folder_is_no_second_view_of_the_kernels_folder(tmp_path, listener):
    seen = _run_probe(tmp_path, _probe_env(tmp_path, listener))
    assert seen["handoff"] == []
    for action in ("create_in_handoff", "fifo_in_handoff", "folder_in_handoff"):
        assert seen[action] == "EROFS", action


def test_no_file_a_kernel_writes_on_the_graders_disk_grows_past_the_cap(tmp_path, listener):
    # Without Landlock: the file-size limit alone. The byte at the cap is refused (EFBIG), the kernel lives on.
    seen = _run_probe(tmp_path, _probe_env(tmp_path, listener))
    for action in ("grow_reply", "grow_log"):
        assert seen[action] == "EFBIG", action
    assert seen["reply_bytes"] == len(b"an answer")
    # Nor past it by reservation: the box's own filter refuses fallocate and io_uring, guard or none.
    assert seen["reserve_past_reply"] == "EPERM" and seen["io_uring"] == "EPERM"
    assert seen["reply_blocks"] * 512 < 2**20


def test_what_a_kernel_writes_in_its_tmp_stays_in_its_box(tmp_path, listener):
    env = _probe_env(tmp_path, listener)
    first = _run_probe(tmp_path, env)
    second = _run_probe(tmp_path, env)
    assert first["write_tmp"] == "done"
    assert "probe-note" not in second["tmp"] and not Path("/tmp/probe-note").exists()


def test_the_worker_keeps_its_kernels_folders_in_one_place_it_removes(tmp_path, listener):
    env = _probe_env(tmp_path, listener)
    _run_probe(tmp_path, env)
    root = warm_kernels.zygote().kernels_root
    assert list(root.iterdir()) == []  # each kernel's folder went with it
    warm_kernels.discard_zygote()
    assert not root.exists()
    assert not os.path.exists(root)


# Run from a copy of the kit: the guard and the answer server are then loaded from below /tmp.
FROM_A_COPY = """
import json, sys
import nbformat
from nbclient import NotebookClient
import gradekit
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.grading.warm_kernels import WarmKernelManager
from gradekit.sandbox.kernel_guard import PROTECTED_VARIABLE

cell = nbformat.v4.new_code_cell("import sys; print(6 * 7, sys.modules.get('kit_kernel_guard') is None)")
notebook = nbformat.v4.new_notebook(cells=[cell])
env = dict(grading_environment(), **{PROTECTED_VARIABLE: sys.argv[1]})
client = NotebookClient(notebook, kernel_name="python3", kernel_manager_class=WarmKernelManager,
                        resources={"metadata": {"path": sys.argv[2]}}, timeout=60)
with client.setup_kernel(env=env):
    client.execute_cell(cell, 0)
print(json.dumps({"kit": gradekit.__file__, "said": cell.outputs[0]["text"]}))
"""


def test_a_kit_that_lies_in_a_temporary_folder_still_runs_guarded_kernels(tmp_path):
    # A course copied with its kit below /tmp (as on the hub): the box's own /tmp must not hide it.
    copy = tmp_path / "course"
    shutil.copytree(REPO_ROOT / "gradekit", copy / "gradekit", ignore=shutil.ignore_patterns("__pycache__"))
    notebooks = copy / "autograded" / "a-student"
    notebooks.mkdir(parents=True)
    program = [sys.executable, "-c", FROM_A_COPY, str(copy), str(notebooks)]
    ran = subprocess.run(program, cwd=copy, env=grading_environment(), capture_output=True, text=True, timeout=180)
    assert ran.returncode == 0, ran.stderr[-3000:]
    seen = json.loads(ran.stdout.splitlines()[-1])
    assert seen["kit"].startswith(str(copy))
    assert seen["said"].split()[0] == "42"
