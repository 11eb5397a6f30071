"""The worker's sandbox: its zygote, and every kernel forked from it, run inside bubblewrap.

bubblewrap (Debian's `bwrap`) is small, audited and widely used; it needs no
privilege where unprivileged user namespaces are on. The zygote starts as PID 1
of its own user, PID, IPC, network, UTS and cgroup namespaces, as user 65534,
on an empty root that holds read-only views of the system's libraries, Python,
its packages and the in-kernel modules, plus one folder of its own with a
subfolder per kernel (`kernels_root`, at the same path inside and out). It sees
no course, no exchange, no gradebook, no other process of the machine. Each
kernel then boxes itself further (gradekit/sandbox/kernel_box.py).

Nothing here decides whether kernels may run without the box: see `require`.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

from gradekit.core.failures import GraderCause, GraderFailure

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # where Debian puts it, whatever PATH the grader was given
BWRAP_VARIABLE = "KIT_BWRAP"  # bubblewrap's path, where a machine keeps it elsewhere
SANDBOX_DIR = Path(__file__).resolve().parent.parent / "sandbox"
BOX_UID = 65534  # "nobody": an identity that owns nothing of the grader's inside the box
HANDOFF = "/kit"  # kernel_box.HANDOFF
SYSTEM_LINKS = ("/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf")
CPU_FACTS = "/sys/devices/system/cpu"  # torch reads the CPU topology here to size its thread pool
INSTALL_HINT = "install Debian's bubblewrap package (apt-get install bubblewrap)"


class BoxUnavailable(RuntimeError):
    """Kernels cannot be boxed on this machine; the message says why and what to do."""


def python_views() -> list[str]:
    """The folders Python needs to start and import the course's packages, without duplicates."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    folders |= {path for path in sys.path if path and "-packages" in path and os.path.isdir(path)}
    real = sorted({os.path.realpath(folder) for folder in folders} | folders)
    # A folder inside another is bound with it.
    return [folder for folder in real if not any(folder.startswith(other + os.sep) for other in real)]


def command(kernels_root: Path, program: list[str], info_fd: int) -> list[str]:
    """The bwrap command line that runs `program` as the worker's zygote."""
    line = [
        bwrap_program() or "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--uid",
        str(BOX_UID),
        "--gid",
        str(BOX_UID),
        "--info-fd",
        str(info_fd),
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            line += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            line += ["--ro-bind", link, link]
    # bubblewrap mounts in order: the box's own /tmp comes before the views, which may lie below it
    # (a clone, or a course copied with its kit, in a temporary folder).
    line += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", HANDOFF]
    for path in [*SYSTEM_FILES, *read_only_views(), CPU_FACTS]:
        if os.path.exists(path) and not path.startswith("/usr/"):
            line += ["--ro-bind", path, path]
    line += ["--bind", str(kernels_root), str(kernels_root), "--chdir", "/", "--", *program]
    return line


def read_only_views() -> list[str]:
    """The folders of the grader a boxed kernel reads: Python's and the kernel's side of the kit."""
    return [*python_views(), str(SANDBOX_DIR)]


def start(
    kernels_root: Path, program: list[str], env: dict[str, str], errors: BinaryIO
) -> tuple[subprocess.Popen, int]:
    """Start `program` in the box; returns the process and the host PID of the program itself.

    `errors` (a file, not a pipe: nobody reads it while the program runs) takes
    what bubblewrap and the program say on their standard error.
    """
    kernels_root.mkdir(parents=True, exist_ok=True)
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            command(kernels_root, program, write_end),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
            text=True,
            pass_fds=(write_end,),
        )
    finally:
        os.close(write_end)
    with os.fdopen(read_end) as info:
        text = info.read()  # bubblewrap writes it, then closes its end, once the box is made
    try:
        return process, int(json.loads(text)["child-pid"])
    except (ValueError, KeyError, TypeError):
        process.kill()
        process.wait()
        raise BoxUnavailable(f"bubblewrap did not start the program: {last_words(errors)}") from None


def last_words(errors: BinaryIO) -> str:
    """The end of what a boxed program wrote to its `errors` file."""
    errors.seek(0)
    return errors.read().decode(errors="replace").strip()[-400:]


def bwrap_program() -> str | None:
    if os.environ.get(BWRAP_VARIABLE):
        return shutil.which(os.environ[BWRAP_VARIABLE])
    return shutil.which("bwrap") or shutil.which("bwrap", path=SYSTEM_PATH)


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """Why kernels cannot be boxed here (None when they can): tried once per process, with a real box."""
    if bwrap_program() is None:
        return f"bubblewrap is not installed: {INSTALL_HINT}"
    probe = [sys.executable, "-c", "import os; print(os.getuid())"]
    with tempfile.TemporaryDirectory(prefix="kit-box-probe-") as root, tempfile.TemporaryFile() as errors:
        try:
            process, _ = start(Path(root), probe, dict(os.environ), errors)
            out, _ = process.communicate(timeout=60)
        except (OSError, BoxUnavailable, subprocess.TimeoutExpired) as error:
            return f"bubblewrap cannot make a box here ({error})"
        if process.returncode != 0 or out.strip() != str(BOX_UID):
            return f"bubblewrap cannot make a box here: {last_words(errors) or out.strip()[-300:]}"
    return None


def refusal(allow_unconfined: bool) -> str | None:
    """What to tell a TA whose machine cannot box kernels and who did not allow that; None when grading may go on."""
    reason = unavailable_reason()
    if reason is None or allow_unconfined:
        return None
    return f"{reason}; or pass --allow-unconfined to grade without it (every row will say so)"


def require(allow_unconfined: bool) -> bool:
    """True when kernels are to be boxed; a machine without the box is refused unless the TA allowed it."""
    refused = refusal(allow_unconfined)
    if refused:
        raise GraderFailure(GraderCause.NO_SANDBOX, refused)
    return unavailable_reason() is None


def host_pid(zygote_pid: int, box_pid: int) -> int | None:
    """The PID, as this machine's other processes see it, of the zygote's child `box_pid`."""
    children = Path(f"/proc/{zygote_pid}/task/{zygote_pid}/children")
    try:
        candidates = children.read_text().split()
    except OSError:
        return None
    for candidate in candidates:
        try:
            status = Path(f"/proc/{candidate}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("NSpid:") and line.split()[-1] == str(box_pid):
                return int(candidate)
    return None
