"""A grading kernel's own box, made in the freshly forked kernel before anything else runs.

The zygote already runs inside the worker's sandbox (its own user, PID, IPC,
network and mount namespaces, read-only views of Python and its packages; see
gradekit/grading/worker_box.py). Each kernel it forks then takes namespaces of
its own, so that nothing one kernel does reaches the next:

- new user, mount, IPC, network and UTS namespaces: no network at all (the
  kernel's Jupyter sockets are Unix sockets in its folder), no shared memory or
  semaphores with anyone;
- a fresh size-capped tmpfs on /tmp and /dev/shm: its only scratch space, gone
  with it;
- of the worker's kernel folders, only its own (`kernel_dir`), read-only except
  the files it must write (its reply, its guard log). It cannot create, replace
  or link an entry of its mailbox or its socket folder, only write into the reply
  file the grader made: its Jupyter sockets are bound here, while the socket
  folder is still writable, and handed to zmq by descriptor (`bound_sockets`).
  The handoff folder it was bound through is then covered by an empty read-only
  tmpfs, so no second, writable view of the folder stays;
- the box's root file system read-only: the zygote and all its kernels share it, and IPython
  reads every kernel's system-wide configuration from its /etc;
- a hard limit on the size of any file it writes (`file_bytes`), with SIGXFSZ
  ignored so a write past it fails with EFBIG instead of killing the kernel:
  its reply and guard log, which lie on the grader's disk, stay that small;
  a seccomp filter of the box's own refuses what that limit does not count,
  fallocate's reservations past a file's end and io_uring, which could make
  them outside any filter (the guard, where it arms, adds its own);
- finally a second user namespace, whose root owns none of those mounts: the
  kernel cannot unmount or remount anything to see what lies below.

Standard library only: the zygote loads this file by path.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import socket
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import NoReturn

NEW_NAMESPACES = 0x10000000 | 0x00020000 | 0x08000000 | 0x40000000 | 0x04000000  # user, mount, IPC, net, UTS
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
# statvfs flag -> the mount flag a remount must repeat (a less privileged namespace may not drop it).
KEPT_FLAGS = ((2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, 1 << 10), (2048, 1 << 11), (4096, 1 << 21))

# The layout of a kernel's folder, made by the grader before the kernel starts.
REQUEST = "mailbox/request"
REPLY = "mailbox/reply"
GUARD_LOG = "mailbox/guard.jsonl"
# Two FIFOs: the grader rings the bell once a request is written, the kernel says "answered" once
# its reply is. A FIFO on a read-only mount can still be opened for writing: nothing it carries
# reaches the disk, and the kernel can neither replace nor remove either.
BELL, ANSWERED = "mailbox/bell", "mailbox/answered"
FIFOS = (BELL, ANSWERED)
SOCKETS = "sockets"  # where the kernel binds its Jupyter sockets (ipc transport)
WORK = "work"  # the kernel's working folder: copies of its notebook's support files
CONNECTION = "connection.json"
WRITABLE = (REPLY, GUARD_LOG)
PORTS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")  # of the connection file
HANDOFF = "/kit"  # an empty folder of the worker's sandbox, used while the mounts are rearranged
# Per architecture: the audit arch, the seccomp call, and the calls that take disk the file-size
# limit does not count: fallocate (FALLOC_FL_KEEP_SIZE reserves blocks past a file's end) and
# io_uring_setup, _enter and _register (its own fallocate operation passes no filter).
DISK_CALLS = {
    "x86_64": (0xC000003E, 317, (285, 425, 426, 427)),
    "aarch64": (0xC00000B7, 277, (47, 425, 426, 427)),
}
X32_CALL_BIT = 0x40000000  # x86_64's x32 calls: the same audit arch, numbers offset by this bit

_libc = ctypes.CDLL(None, use_errno=True)


class BoxError(OSError):
    pass


def enter(
    kernel_dir: str, tmp_bytes: int, notebook_dir: str, keep: Iterable[str] = (), file_bytes: int | None = None
) -> tuple[str, dict[str, int]]:
    """Box this process (single-threaded, just forked) around `kernel_dir`.

    Returns the folder to work in and the kernel's Jupyter sockets, bound and
    listening ({zmq address: descriptor}; empty unless its connection uses
    Unix sockets). The folder is the notebook's own path where it can be made
    inside the box, holding (read-only) the copies of its support files, so
    the kernel looks as if started beside its notebook; else the work folder
    itself. `keep` are read-only views (Python, the kit's kernel side) that
    stay visible where they lie below the fresh /tmp. `file_bytes` caps every
    file the kernel writes (by default, its /tmp's size).
    """
    kernel_dir = os.path.realpath(kernel_dir)
    _own_user_namespace(extra=NEW_NAMESPACES)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount(kernel_dir, HANDOFF, None, MS_BIND | MS_REC)
    hidden = _held_below(keep, ("/tmp", "/dev/shm"))
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(tmp_bytes)},mode=1777")
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,mode=1777")
    _put_back(hidden)
    parent = os.path.dirname(kernel_dir)
    if os.path.isdir(parent):  # the worker's folder of kernel folders, when it lies outside /tmp: hide it
        _mount("tmpfs", parent, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
    os.makedirs(kernel_dir, exist_ok=True)
    _mount(HANDOFF, kernel_dir, None, MS_BIND | MS_REC)
    sockets = bound_sockets(kernel_dir)
    _remount(kernel_dir, read_only=True)
    for name in WRITABLE:
        path = os.path.join(kernel_dir, name)
        _mount(path, path, None, MS_BIND)
        _remount(path, read_only=False)
    workdir = _work_where_the_notebook_was(os.path.join(kernel_dir, WORK), notebook_dir)
    _close_the_handoff()
    # The box's root (its /etc, where IPython reads every kernel's system-wide configuration, among
    # it) is one file system for the warm parent and every kernel it forks: read-only from here.
    _remount("/", read_only=True)
    _cap_file_sizes(int(file_bytes or tmp_bytes))
    _refuse_disk_reservations()
    _own_user_namespace(extra=0)  # gives up every power over the mounts above
    return workdir, sockets


def bound_sockets(kernel_dir: str) -> dict[str, int]:
    """Bind and listen on the sockets the kernel's connection file names: {zmq address: descriptor}.

    Made before the folder turns read-only, so the kernel never needs to make a
    file there again; zmq takes each descriptor instead of binding (ZMQ_USE_FD).
    """
    with open(os.path.join(kernel_dir, CONNECTION)) as connection_file:
        connection = json.load(connection_file)
    if connection.get("transport") != "ipc":
        return {}
    sockets = {}
    for port in PORTS:
        path = f"{connection['ip']}-{connection[port]}"
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(path)
        listening.listen(socket.SOMAXCONN)
        sockets[f"ipc://{path}"] = listening.detach()
    return sockets


def _close_the_handoff() -> None:
    """Unmount the writable view of the kernel's folder, and cover its mount point (writable in the worker's box)."""
    if _libc.umount2(HANDOFF.encode(), MNT_DETACH) != 0:
        _fail(f"umount {HANDOFF}")
    _mount("tmpfs", HANDOFF, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=555")


def _cap_file_sizes(limit: int) -> None:
    """A hard limit: the kernel's user namespace gives it no power to raise it again."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG for the write, not death for the kernel
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _refuse_disk_reservations() -> None:
    """A seccomp filter for this process and all it starts: the DISK_CALLS, and any other table's call, fail with EPERM."""
    known = DISK_CALLS.get(os.uname().machine)
    if known is None:
        raise BoxError(f"the box knows no system call numbers for {os.uname().machine}")
    arch, seccomp, refused = known
    load, equal, at_least, ret = 0x20, 0x15, 0x35, 0x06
    allow, refuse = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    last = 5 + len(refused)  # the index of the final "refuse"; a jump counts the steps it skips
    steps = [
        (load, 0, 0, 4),  # the audit arch
        (equal, 0, last - 2, arch),
        (load, 0, 0, 0),  # the call number
        (at_least, last - 4, 0, X32_CALL_BIT),
        *[(equal, last - 5 - i, 0, number) for i, number in enumerate(refused)],
        (ret, 0, 0, allow),
        (ret, 0, 0, refuse),
    ]
    program = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *step) for step in steps))

    class Program(ctypes.Structure):
        _fields_ = [("length", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    if _libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        _fail("prctl(PR_SET_NO_NEW_PRIVS)")
    if _libc.syscall(seccomp, 1, 0, ctypes.byref(Program(len(steps), ctypes.addressof(program)))) != 0:
        _fail("seccomp")


def _held_below(paths: Iterable[str], roots: tuple[str, ...]) -> list[tuple[str, int]]:
    """The folders of `paths` below one of `roots`, each held open (by path only) before the roots are covered."""
    held = []
    for path in paths:
        real = os.path.realpath(path)
        if any(real.startswith(root + os.sep) for root in roots) and os.path.isdir(real):
            held.append((real, os.open(real, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)))
    return held


def _put_back(held: list[tuple[str, int]]) -> None:
    """Bind each held folder at its old path, read-only, over the fresh file systems."""
    for path, descriptor in held:
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{descriptor}", path, None, MS_BIND | MS_REC)
        _remount(path, read_only=True)
        os.close(descriptor)


def _work_where_the_notebook_was(work: str, notebook_dir: str) -> str:
    try:
        os.makedirs(notebook_dir, exist_ok=True)
        _mount(work, notebook_dir, None, MS_BIND)
    except OSError:
        return work
    return notebook_dir


def _own_user_namespace(extra: int) -> None:
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(0x10000000 | extra) != 0:
        _fail("unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _remount(path: str, read_only: bool) -> None:
    flags = 0
    for statvfs_flag, mount_flag in KEPT_FLAGS:
        if os.statvfs(path).f_flag & statvfs_flag:
            flags |= mount_flag
    _mount(None, path, None, MS_REMOUNT | MS_BIND | flags | (MS_RDONLY if read_only else 0))


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    encode = lambda text: text.encode() if text is not None else None  # noqa: E731
    if _libc.mount(encode(source), encode(target), encode(kind), flags, encode(data)) != 0:
        _fail(f"mount {target}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as out:
        out.write(text)


def _fail(what: str) -> NoReturn:
    number = ctypes.get_errno()
    raise BoxError(number, f"{what}: {os.strerror(number)}")
