"""File-system confinement of a grading kernel with Linux Landlock, below anything Python can patch.

The audit hook of kernel_guard.py sees Python's own file operations only;
torch and numpy open files in C (`torch.from_file`, `numpy.fromfile`).
Landlock makes the kernel itself refuse them: the kernel may read everything
except the protected course folders (where it keeps only Python's own
installation and the support modules beside its notebook) and other
processes' entries in /proc, and may write only
to a private temporary folder (removed after the notebook) and /dev/null. It
is applied once, in the freshly forked kernel while it is still
single-threaded, so every thread it starts inherits it. Standard library only: the kernel loads this file by path.
"""

import ctypes
import os
import struct
import tempfile

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and aarch64
RULE_PATH_BENEATH = 1
READ_FILE, READ_DIR = 1 << 2, 1 << 3
WRITES = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8) | (1 << 12) | (1 << 13) | (1 << 14)
FILE_RIGHTS = (1 << 1) | READ_FILE | (1 << 14)  # the rights Landlock accepts on a single file
HANDLED = READ_FILE | READ_DIR | WRITES
MINIMUM_ABI = 3  # truncation is handled from ABI 3 on


def confine(protected_roots, readable_inside, notebook_dir, private_tmp):
    """Confine this process; returns False where Landlock is missing (the grader removes `private_tmp`)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(CREATE_RULESET, None, 0, 1) < MINIMUM_ABI:  # LANDLOCK_CREATE_RULESET_VERSION
        return False
    attributes = struct.pack("Q", HANDLED)
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
        _allow(libc, ruleset, private_tmp, READ_FILE | READ_DIR | WRITES)
        # Of /dev, only the null device: a file left in /dev/shm would reach the next student's kernel.
        _allow(libc, ruleset, os.devnull, READ_FILE | WRITES)
        if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
            return False
    finally:
        os.close(ruleset)
    os.environ["TMPDIR"] = tempfile.tempdir = private_tmp
    return True


def readable_outside(protected_roots):
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


def _own_proc_entries():
    own = str(os.getpid())
    return [entry.path for entry in os.scandir("/proc") if not entry.name.isdigit() or entry.name == own]


def _within(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _allow(libc, ruleset, path, rights):
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
