"""The worker's scratch gradebook, written without waiting for the disk.

nbgrader commits its gradebook once per graded cell and more for each
notebook's set-up, and every commit of a SQLite file waits for the disk to
confirm it (several milliseconds on a shared disk, a hundred or more commits
per submission). The scratch gradebook needs no such promise: it is written
afresh from the template before every try and read once into a plain record,
so a lost write costs at most that try. Its connections skip the wait
(`synchronous=OFF`) and keep the rollback journal in memory; the course's own
gradebook is left as it is. What is written, and so every grade, is the same.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

UNSYNCED = ("PRAGMA synchronous=OFF", "PRAGMA journal_mode=MEMORY")


@dataclasses.dataclass(frozen=True)
class UnsyncedGradebook:
    """An engine's connect hook that skips the disk's confirmation on the connections to one SQLite file."""

    path: Path

    def __call__(self, connection: Any, _record: Any) -> None:
        if isinstance(connection, sqlite3.Connection) and _main_file(connection) == self.path:
            for pragma in UNSYNCED:
                connection.execute(pragma).close()

    def install(self) -> UnsyncedGradebook:
        """Hook every engine this process creates (nbgrader creates its own, one per step), once."""
        if not event.contains(Engine, "connect", self):
            event.listen(Engine, "connect", self)
        return self

    def remove(self) -> None:
        if event.contains(Engine, "connect", self):
            event.remove(Engine, "connect", self)


def _main_file(connection: sqlite3.Connection) -> Path | None:
    """The file of the connection's main database; None for one in memory."""
    for _, name, file in connection.execute("PRAGMA database_list").fetchall():
        if name == "main" and file:
            return Path(file).resolve()
    return None
