"""Reading the guard's log of a kernel: only the regular file the grader made, never waiting, never all of a flood."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

MAX_LOG_BYTES = 16 * 2**20  # the guard logs each kind of refusal once: an honest log holds a few kilobytes


def _open_log(path: Path) -> int:
    """The log for reading: never through a link, and never waiting on a FIFO put in its place."""
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the regular file at `path`; None if there is none."""
    try:
        handle = _open_log(path)
    except OSError:
        return None
    try:
        info = os.fstat(handle)
    finally:
        os.close(handle)
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def read_log(path: Path, identity: tuple[int, int] | None) -> tuple[list[dict], str]:
    """The guard's records, and what is wrong with the file ("" when it is the log the grader made).

    A missing log gives no records and no complaint: the student's kernel can
    neither remove nor rename it, so its absence is the grader's to explain.
    """
    try:
        handle = _open_log(path)
    except FileNotFoundError:
        return [], ""
    except OSError as error:
        return [], f"could not be opened ({error.strerror})"
    with os.fdopen(handle, "rb") as log:
        info = os.fstat(log.fileno())
        if not stat.S_ISREG(info.st_mode):
            return [], "is not a regular file"
        if identity is not None and (info.st_dev, info.st_ino) != identity:
            return [], "is not the file the grader made"
        text = log.read(MAX_LOG_BYTES + 1)
    too_large = f"is larger than {MAX_LOG_BYTES // 2**20} MiB (read that far)" if len(text) > MAX_LOG_BYTES else ""
    return [_record(line) for line in text[:MAX_LOG_BYTES].decode(errors="replace").splitlines()], too_large


def _record(line: str) -> dict:
    try:
        record = json.loads(line)
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}
