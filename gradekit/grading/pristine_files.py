"""Files kept in memory and put back on disk before every submission, as fresh copies.

The scratch course's source folder and gradebook are restored before each
submission is graded, so nothing one student's run changed there reaches the
next. Most of it is untouched between two submissions (a run writes only the
gradebook), so a file is left where it is when it is still the very file the
last restore wrote: the same inode, its status unchanged since (its change time,
which any write, link, rename, mode or attribute change moves and no one can
set back), its only name, and its bytes still the kept ones. Anything else is
written afresh; a kept folder whose own status moved (an entry added, removed or
renamed, its mode changed) is removed with everything below it and written
afresh. Reading back is cheaper than writing: a write goes through the file
system's journal and is written out to disk later.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

# What says a file or folder is the one a restore left: where it lies, and its status as it left it.
Identity = tuple[int, int, int, int]  # (device, inode, change time in ns, mode)


class PristineFiles:
    """(path relative to a root, content) of each kept file, and the folders under the root kept whole."""

    def __init__(self, files: Iterable[tuple[str, bytes]], folders: Iterable[str] = ()):
        self.files = dict(files)
        self.folders = tuple(folders)  # kept whole: anything else found below one is removed
        below = {str(parent) for relative in self.files for parent in Path(relative).parents}
        self.kept_folders = sorted(
            folder for folder in below if any(Path(folder).is_relative_to(top) for top in self.folders)
        )
        # kept folder -> the names it holds: compared as well, where a file system's times are coarse
        self.entries = {
            folder: _entries_below(folder, [*self.kept_folders, *self.files]) for folder in self.kept_folders
        }
        self.left: dict[str, Identity] = {}  # relative path -> its identity when the last restore ended

    def restore(self, root: Path) -> None:
        """Make the kept files under `root` exactly as they were kept, writing only what is not as the last restore left it."""
        for folder in self.folders:
            if not self._as_left(root, [f for f in self.kept_folders if Path(f).is_relative_to(folder)]):
                remove_path(root / folder)
        for relative, content in self.files.items():
            path = root / relative
            if not (self._as_left(root, [relative]) and holds(path, content)):
                remove_path(path)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
        self.left = {relative: _identity(root / relative) for relative in [*self.kept_folders, *self.files]}

    def _as_left(self, root: Path, relatives: list[str]) -> bool:
        """Each of `relatives` is still the file or folder the last restore left, with its only name."""
        for relative in relatives:
            try:
                info = os.lstat(root / relative)
            except OSError:
                return False
            if _identity_of(info) != self.left.get(relative) or (stat.S_ISREG(info.st_mode) and info.st_nlink != 1):
                return False
            if relative in self.entries and sorted(os.listdir(root / relative)) != self.entries[relative]:
                return False
        return bool(relatives)


def _entries_below(folder: str, relatives: list[str]) -> list[str]:
    """The names directly below `folder` among `relatives`, sorted."""
    return sorted(Path(relative).name for relative in relatives if str(Path(relative).parent) == folder)


def holds(path: Path, content: bytes) -> bool:
    """`path` is a regular file (not a link, not a pipe) whose bytes are `content`; reads at most one byte more."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(content):
            return False
        chunks, wanted = [], len(content) + 1
        while wanted > 0 and (chunk := os.read(handle, wanted)):
            chunks.append(chunk)
            wanted -= len(chunk)
        return b"".join(chunks) == content
    except OSError:
        return False
    finally:
        os.close(handle)


def remove_path(path: Path) -> None:
    """Remove whatever is at `path` (a file, a link, a whole folder); nothing there is fine."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)
    else:
        path.unlink()


def _identity(path: Path) -> Identity:
    return _identity_of(os.lstat(path))


def _identity_of(info: os.stat_result) -> Identity:
    return (info.st_dev, info.st_ino, info.st_ctime_ns, info.st_mode)
