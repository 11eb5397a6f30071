"""File-system confinement of a grading kernel with Linux Landlock, below anything Python can patch.

The audit hook of kernel_guard.py sees Python's own file operations only;
torch and numpy open files in C (`torch.from_file`, `numpy.fromfile`).
Landlock makes the kernel itself refuse them: the kernel may read everything
except the protected course folders (where it keeps only Python's own
installation and the support modules beside its notebook) and other
processes' entries in /proc, and may write only
to a private temporary folder (removed after the notebook) and /dev/null;
where the kernel offers it, it may signal only its own descendants. It
is applied once, in the freshly forked kernel while it is still
single-threaded, so every thread it starts inherits it. Standard library only: the kernel loads this file by path.
"""

from __future__ import annotations

import ctypes
import os
import struct
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and aarch64
RULE_PATH_BENEATH = 1
READ_FILE, READ_DIR = 1 << 2, 1 << 3
WRITES = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8) | (1 << 12) | (1 << 13) | (1 << 14)
MAKE_CHAR, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 6, 1 << 9, 1 << 10, 1 << 11
# Sockets and FIFOs may be made in the private folder only (the kernel's own sockets may live
# there); device files nowhere. Left unhandled, any of them could be made anywhere, a
# classmate's folder or the path where the grader will write a result included.
SPECIAL_FILES = MAKE_SOCK | MAKE_FIFO
FILE_RIGHTS = (1 << 1) | READ_FILE | (1 << 14)  # the rights Landlock accepts on a single file
HANDLED = READ_FILE | READ_DIR | WRITES | SPECIAL_FILES | MAKE_CHAR | MAKE_BLOCK
MINIMUM_ABI = 3  # truncation is handled from ABI 3 on
# From ABI 6 on, a ruleset may also be scoped: signals may reach only the kernel's own
# descendants, and abstract Unix sockets only those its own domain made. The ruleset's
# attributes then grow from one u64 (the handled file rights) to three (file rights,
# network rights, scopes).
SCOPED_ABI = 6
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


def confine(
    protected_roots: Iterable[str],
    readable_inside: Iterable[str],
    notebook_dir: str,
    private_tmp: str,
    socket_dir: str = "",
) -> bool:
    """Confine this process; returns False where Landlock is missing (the grader removes `private_tmp`).

    `socket_dir`, when given, holds a boxed kernel's Jupyter sockets, bound
    before it was confined (kernel_box.bound_sockets): it may list it, make nothing there.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < MINIMUM_ABI:
        return False
    attributes = ruleset_attributes(abi)
    ruleset = libc.syscall(CREATE_RULESET, attributes, len(attributes), 0)
    if ruleset < 0:
        return False
    try:
        for path in readable_outside(protected_roots):
            _allow(libc, ruleset, path, READ_FILE | READ_DIR)
        for path in readable_inside:
            _allow(libc, ruleset, path, READ_FILE | READ_DIR)
        _allow(libc, ruleset, notebook_dir, READ_DIR)
        for entry in os.scandir(notebook_dir):
            if entry.is_file() and not entry.name.endswith(".ipynb"):
                _allow(libc, ruleset, entry.path, READ_FILE)
        _allow(libc, ruleset, private_tmp, READ_FILE | READ_DIR | WRITES | SPECIAL_FILES)
        if socket_dir:
            _allow(libc, ruleset, socket_dir, READ_DIR)
        # Of /dev, only the null device: a file left in /dev/shm would reach the next student's kernel.
        _allow(libc, ruleset, os.devnull, READ_FILE | WRITES)
        if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
            return False
    finally:
        os.close(ruleset)
    os.environ["TMPDIR"] = tempfile.tempdir = private_tmp
    return True


def ruleset_attributes(abi: int) -> bytes:
    """The ruleset's attributes, sized for the running ABI (an older kernel refuses fields it does not know)."""
    if abi < SCOPED_ABI:
        return struct.pack("Q", HANDLED)
    return struct.pack("QQQ", HANDLED, 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)


def readable_outside(protected_roots: Iterable[str]) -> list[str]:
    """The largest folders that hold none of the protected roots, covering all the rest of the tree.

    Of /proc, only this process's own entry and the system-wide files: another
    process's environment (a grader's gradebook password), memory and open
    files stay out of reach even from C.
    """
    roots = [os.path.realpath(root) for root in protected_roots]
    found, pending = [], ["/"]
    while pending:
        folder = pending.pop()
        for entry in os.scandir(folder):
            path = entry.path
            if path == "/proc":
                found += _own_proc_entries()
                continue
            # A rule follows a symbolic link to its target: judge the target.
            target = os.path.realpath(path) if entry.is_symlink() else path
            if any(_within(target, root) for root in roots):
                continue
            if any(_within(root, target) for root in roots):
                if not entry.is_symlink() and entry.is_dir(follow_symlinks=False):
                    pending.append(path)
                continue
            found.append(path)
    return found


def _own_proc_entries() -> list[str]:
    own = str(os.getpid())
    return [entry.path for entry in os.scandir("/proc") if not entry.name.isdigit() or entry.name == own]


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        handle = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = struct.pack("=Qi", rights & HANDLED, handle)
        libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, rule, 0)
    finally:
        os.close(handle)
