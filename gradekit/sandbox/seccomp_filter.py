"""The guard's seccomp filter: the system calls a grading kernel may no longer make once it is armed.

The guard (kernel_guard.py) installs it when the grader arms it, for every
thread of the kernel. Written as classic BPF with labels (`seccomp_steps`),
assembled into relative jumps (`_assemble`) and installed through the C library
(`forbid_new_programs`). Standard library only: the guard loads this file by
path, in the kernel and in the grader alike.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeAlias

    # (audit arch, the seccomp call, {refused call: its number}, socket, clone, clone3, (fork, vfork))
    ArchNumbers: TypeAlias = tuple[int, int, dict[str, int], int, int, int, tuple[int, ...]]
    # (code, label if true, label if false, constant), or (label,) where a label stands
    LabelledStep: TypeAlias = tuple[int, str, str, int] | tuple[str]
    Step: TypeAlias = tuple[int, int, int, int]  # (code, jump if true, jump if false, constant)

# Seccomp (Linux): refuse execve for this process and all its threads, so no new program
# can start, whatever Python route (some have no audit event) forks and execs it; and refuse
# setsid and setpgid, so a child forked without exec stays in the kernel's process group,
# which the grader kills with the kernel. No network either: connect() is refused, and of new
# sockets only stream ones (Unix or TCP, which can then reach nobody) may be made, so no
# datagram, raw or packet socket can send anything anywhere, not even to another kernel. The kernel's own sockets are bound
# before the filter is installed. Refused too: process file descriptors (a pidfd signals any
# process, the grading worker included, past the audit hook), reading or writing another
# process's memory, and every way to change namespaces or mounts (they could undo a box the
# operating system put the kernel in). And fallocate: it reserves disk past a file's end
# (FALLOC_FL_KEEP_SIZE) that the box's file-size limit does not count, on the guard log the
# kernel holds open on the grader's disk among others; and io_uring, whose own fallocate (and
# every other operation it runs for the kernel) passes no filter. And every change to how the
# scheduler treats the kernel's threads (niceness, CPU affinity, a policy other than the normal one):
# a kernel that pins many threads to one busy core at the lowest priority waits for a CPU at will,
# and a wait is what the grader takes for a loaded machine (gradekit/grading/cpu_clock.py), its own
# failure, tried again. sched_setscheduler passes with the normal policy only: the messaging library
# sets each new thread's policy, unchanged, that way, and aborts when it cannot.
# And every new process, always, not only where no cgroup bounds the kernel's tree: a kernel never
# needs a child (it starts no program), while a child forked without exec (through
# _posixsubprocess.fork_exec with a preexec_fn, which has no audit event) gets an address-space cap
# of its own, so children multiply the memory the per-process cap allows. fork and vfork are
# refused; clone only makes a thread (CLONE_THREAD, and no new namespace): torch and Python start
# threads; clone3 passes its flags in a struct the filter cannot read, so it fails with ENOSYS and
# the C library falls back to clone. The memory and pids cgroup (gradekit/grading/kernel_cgroups.py)
# is the second layer: it bounds the threads and the whole tree's memory where it can be made.
# Per architecture: (audit arch, the seccomp call, {refused call: its number}, socket,
# clone, clone3, (fork, vfork) where the architecture has them).
SECCOMP_ARCHES: dict[str, ArchNumbers] = {
    "x86_64": (
        0xC000003E,
        317,
        {
            "execve": 59,
            "execveat": 322,
            "setsid": 112,
            "setpgid": 109,
            "connect": 42,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "unshare": 272,
            "setns": 308,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "fallocate": 285,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "setpriority": 141,
            "sched_setaffinity": 203,
            "sched_setattr": 314,
        },
        41,
        56,
        435,
        (57, 58),
    ),
    "aarch64": (
        0xC00000B7,
        277,
        {
            "execve": 221,
            "execveat": 281,
            "setsid": 157,
            "setpgid": 154,
            "connect": 203,
            "pidfd_open": 434,
            "pidfd_send_signal": 424,
            "pidfd_getfd": 438,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "unshare": 97,
            "setns": 268,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "fallocate": 47,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "setpriority": 140,
            "sched_setaffinity": 122,
            "sched_setattr": 274,
        },
        198,
        220,
        435,
        (),
    ),
}
AF_UNIX, AF_INET, AF_INET6, SOCK_STREAM = 1, 2, 10, 1
SCHEDULER_CALLS = {"x86_64": 144, "aarch64": 119}  # sched_setscheduler, which passes for SCHED_OTHER only
SCHED_OTHER = 0
CLONE_THREAD = 0x00010000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a thread in a namespace of its own
# (clone() cannot ask for a time namespace: that bit is part of its exit signal).
CLONE_NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
ENOSYS = 38
X32_CALL_BIT = 0x40000000  # x86_64's x32 calls: same audit arch, numbers offset by this bit (no other arch has them)


def forbid_new_programs() -> bool:
    """Install the seccomp filter; False where the platform or the container does not allow it."""
    import ctypes
    import platform
    import struct

    numbers = SECCOMP_ARCHES.get(platform.machine())
    if numbers is None or not sys.platform.startswith("linux"):
        return False
    arch, seccomp, refused, socket_call, clone, clone3, forks = numbers
    steps = seccomp_steps(
        arch, (*refused.values(), *forks), socket_call, (clone, clone3), SCHEDULER_CALLS[platform.machine()]
    )
    program = b"".join(struct.pack("HBBI", *step) for step in steps)
    buffer = ctypes.create_string_buffer(program)

    class Program(ctypes.Structure):
        _fields_ = [("length", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return False
    # SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_TSYNC: every thread of the kernel.
    return libc.syscall(seccomp, 1, 1, ctypes.byref(Program(len(program) // 8, ctypes.addressof(buffer)))) == 0


def seccomp_steps(
    arch: int, refused: tuple[int, ...], socket_call: int, clones: tuple[int, int], scheduler_call: int | None = None
) -> list[Step]:
    """The filter as classic BPF steps (code, jump if true, jump if false, constant).

    A call made through another architecture's table (32-bit calls from a
    64-bit process, or x32 calls on x86_64) fails, since its numbers differ
    and would slip past the list; each refused call fails with EPERM; socket()
    passes for AF_UNIX, AF_INET and AF_INET6 with SOCK_STREAM only (a datagram
    socket could send without connecting); clone passes for a thread only
    (CLONE_THREAD without a new namespace), clone3 fails with ENOSYS; `scheduler_call`
    (sched_setscheduler), when given, passes for the normal policy only; the rest pass.
    Written with labels; `_assemble` turns them into relative jumps.
    """
    load, load_arg, equal, at_least, mask, has_bits, ret = 0x20, 0x20, 0x15, 0x35, 0x54, 0x45, 0x06
    allow, refuse = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    no_such_call = 0x00050000 | ENOSYS
    domain, kind, flags = 16, 24, 16  # offsets of the call's first two arguments in seccomp_data (low words)
    clone, clone3 = clones
    steps: list[LabelledStep] = [
        (load, "", "", 4),
        (equal, "", "refuse", arch),  # the audit arch
        (load, "", "", 0),  # the call number
        (at_least, "refuse", "", X32_CALL_BIT),
        *[(equal, "refuse", "", number) for number in refused],
        *([(equal, "scheduler", "", scheduler_call)] if scheduler_call is not None else []),
        (equal, "no such call", "", clone3),
        (equal, "clone", "", clone),
        (equal, "socket", "allow", socket_call),
        ("clone",),
        (load_arg, "", "", flags),
        (has_bits, "refuse", "", CLONE_NEW_NAMESPACES),
        (has_bits, "allow", "refuse", CLONE_THREAD),
        ("scheduler",),
        (load_arg, "", "", kind),  # the policy: the second argument, as the socket's kind is
        (equal, "allow", "refuse", SCHED_OTHER),
        ("socket",),
        (load_arg, "", "", domain),
        (equal, "stream", "", AF_UNIX),
        (equal, "stream", "", AF_INET),
        (equal, "stream", "refuse", AF_INET6),
        ("stream",),
        (load_arg, "", "", kind),
        (mask, "", "", 0xF),
        (equal, "allow", "refuse", SOCK_STREAM),
        ("allow",),
        (ret, "", "", allow),
        ("refuse",),
        (ret, "", "", refuse),
        ("no such call",),
        (ret, "", "", no_such_call),
    ]
    return _assemble(steps)


def _assemble(steps: list[LabelledStep]) -> list[Step]:
    """Labels (1-tuples) to relative jump offsets; an empty label means the next step."""
    positions: dict[str, int] = {}
    count = 0
    for step in steps:
        if len(step) == 1:
            positions[step[0]] = count
        else:
            count += 1
    program: list[Step] = []
    index = 0
    for step in steps:
        if len(step) == 1:
            continue
        code, true, false, constant = step
        jump = [positions[label] - index - 1 if label else 0 for label in (true, false)]
        program.append((code, jump[0], jump[1], constant))
        index += 1
    return program
