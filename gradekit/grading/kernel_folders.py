"""A grading kernel's folder: its mailbox, its sockets and its working copy of the support files.

The grader makes every entry before the kernel starts, so the kernel never
creates what the grader later opens (the layout is kernel_box.py's). A boxed
kernel sees this folder read-only except its reply and its guard log (its
sockets are bound by the box before the folder turns read-only); its scratch
space is a tmpfs of its own. An unconfined kernel
(the TA allowed it) gets a `tmp/` subfolder instead.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import tempfile
from pathlib import Path

from gradekit.sandbox import kernel_box

UNCONFINED_TMP = "tmp"
SUPPORT_FILE_BYTES = 64 * 2**20  # a support module or data file beside a notebook; bigger ones are not copied


@dataclasses.dataclass(frozen=True)
class KernelFolder:
    path: Path
    boxed: bool

    @classmethod
    def make(cls, root: Path, notebook_dir: str, boxed: bool) -> KernelFolder:
        path = Path(tempfile.mkdtemp(prefix="k", dir=root))
        (path / "mailbox").mkdir()
        for name in (kernel_box.REQUEST, kernel_box.REPLY, kernel_box.GUARD_LOG):
            (path / name).touch(mode=0o600)
        for name in kernel_box.FIFOS:
            os.mkfifo(path / name, mode=0o600)
        (path / kernel_box.SOCKETS).mkdir(mode=0o700)
        (path / kernel_box.WORK).mkdir()
        if boxed:
            _copy_support_files(Path(notebook_dir), path / kernel_box.WORK)
        else:
            (path / UNCONFINED_TMP).mkdir(mode=0o700)
        return cls(path, boxed)

    @property
    def request(self) -> Path:
        return self.path / kernel_box.REQUEST

    @property
    def reply(self) -> Path:
        return self.path / kernel_box.REPLY

    @property
    def bell(self) -> Path:
        return self.path / kernel_box.BELL

    @property
    def answered(self) -> Path:
        return self.path / kernel_box.ANSWERED

    @property
    def guard_log(self) -> Path:
        return self.path / kernel_box.GUARD_LOG

    @property
    def sockets(self) -> Path:
        return self.path / kernel_box.SOCKETS

    @property
    def connection_file(self) -> Path:
        return self.path / kernel_box.CONNECTION

    def kernel_tmp(self) -> str:
        """The kernel's only writable scratch folder, as the kernel names it."""
        return "/tmp" if self.boxed else str(self.path / UNCONFINED_TMP)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _copy_support_files(notebook_dir: Path, work: Path) -> None:
    """The regular files beside the notebook (its support modules and data), never links, FIFOs or notebooks."""
    try:
        entries = list(os.scandir(notebook_dir))
    except OSError:
        return
    for entry in entries:
        if entry.name.endswith(".ipynb"):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_size > SUPPORT_FILE_BYTES:
            continue
        try:
            handle = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(handle, "rb") as source:
            if stat.S_ISREG(os.fstat(source.fileno()).st_mode):  # still the file it was a moment ago
                (work / entry.name).write_bytes(source.read(SUPPORT_FILE_BYTES))
