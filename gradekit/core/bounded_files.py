"""Reading a file someone else made: a regular file of bounded size, never through a link, never waiting.

A student's submission and a kernel's reply are made by untrusted code. A
name can stand for a symbolic link (to a classmate's notebook), a FIFO (whose
open waits forever for a writer), a device, or a file of gigabytes. The file
is opened without following a link and without blocking, checked with fstat
on the descriptor that was opened (so nothing can be swapped in between the
check and the read), and read to at most one byte past its limit (so a file
that grows while it is read is caught too).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import nbformat
from nbformat import NotebookNode

OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
# A course notebook with its outputs and a few plots weighs a few megabytes; past this, it is not a student's work.
MAX_NOTEBOOK_BYTES = 2**25


class RefusedFile(OSError):
    """The file is not a regular file, or holds more bytes than allowed; it was not read."""


def read_bounded(path: Path | str, limit: int, *, keep_head: bool = False) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them.

    A larger file is refused, or, with `keep_head`, cut to its first `limit`
    bytes (for a log whose first records still tell something). A missing
    file or a symbolic link raises OSError as `open` does; anything else
    that is not a regular file raises RefusedFile.
    """
    handle = os.open(path, OPEN_FLAGS)
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedFile(f"{Path(path).name} is not a regular file")
        if info.st_size > limit and not keep_head:
            raise RefusedFile(f"{Path(path).name} holds {info.st_size} bytes, more than the {limit} allowed")
        data = _read_up_to(handle, limit + 1)
    finally:
        os.close(handle)
    if len(data) > limit:
        if not keep_head:
            raise RefusedFile(f"{Path(path).name} grew past the {limit} bytes allowed while it was read")
        data = data[:limit]
    return data


def read_notebook(path: Path | str) -> NotebookNode:
    """A notebook a student made: a regular file of at most `MAX_NOTEBOOK_BYTES`, never read through a link."""
    return nbformat.reads(read_bounded(path, MAX_NOTEBOOK_BYTES).decode("utf-8"), as_version=4)


def _read_up_to(handle: int, count: int) -> bytes:
    """Up to `count` bytes: one read may return fewer than asked, so read until the end or the count."""
    chunks, left = [], count
    while left > 0:
        chunk = os.read(handle, min(left, 2**20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
