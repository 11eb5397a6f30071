"""Files kept in memory and put back on disk before every submission, exactly as they were.

The scratch course's source folder and gradebook are restored before each
submission is graded, so nothing one student's run changed there reaches the
next. Most of it is unchanged between two submissions (only the gradebook is
written by a run): a file whose bytes on disk are still the kept ones stays, a
changed, missing or replaced one is written again, and whatever was added
under a kept folder is removed. Reading back is cheaper than writing: a write
goes through the file system's journal and is written out to disk later.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path


class PristineFiles:
    """(path relative to a root, content) of each kept file, and the folders under the root they make up."""

    def __init__(self, files: Iterable[tuple[str, bytes]], folders: Iterable[str] = ()):
        self.files = dict(files)
        self.folders = tuple(folders)  # kept whole: anything else found below one is removed
        self.file_folders = {str(parent) for relative in self.files for parent in Path(relative).parents}

    def restore(self, root: Path) -> None:
        """Make the kept files under `root` exactly as they were kept, rewriting only what differs."""
        for folder in self.folders:
            self._remove_extras(root, root / folder)
        for relative, content in self.files.items():
            path = root / relative
            if not _holds(path, content):
                remove_path(path)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)

    def _remove_extras(self, root: Path, folder: Path) -> None:
        """Remove whatever lies below `folder` that is neither a kept file nor a folder holding one."""
        if not _is_folder(folder):
            remove_path(folder)
            return
        for parent, folders, files in os.walk(folder, topdown=False):
            for name in folders + files:
                path = Path(parent, name)
                relative = str(path.relative_to(root))
                kept = self.file_folders if _is_folder(path) else self.files
                if relative not in kept:
                    remove_path(path)


def _is_folder(path: Path) -> bool:
    """A real folder, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _holds(path: Path, content: bytes) -> bool:
    """`path` is a regular file (not a link) whose bytes are `content`."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(content):
            return False
        return path.read_bytes() == content
    except OSError:
        return False


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
