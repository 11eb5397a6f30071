"""The worker's scratch gradebook, written without waiting for the disk.

nbgrader commits its gradebook once per graded cell and more for each
notebook's set-up, and every commit of a SQLite file waits for the disk to
confirm it (several milliseconds on a shared disk, a hundred or more commits
per submission). The scratch gradebook needs no such promise: it is written
afresh from the template before every try and read once into a plain record,
so a lost write costs at most that try. Its connections skip the wait
(`synchronous=OFF`) and keep the rollback journal in memory; the course's own
gradebook is left as it is. What is written, and so every grade, is the same.

nbgrader also opens the gradebook afresh about ten times a submission, and each
open builds a new SQLAlchemy engine whose statement cache starts empty, so every
query is compiled again. The worker keeps one engine for the scratch gradebook
instead (`SharedEngine`): nbgrader's `Gradebook` still opens and closes it as
before, and its connections are closed before each try rewrites the file. Each
open also checks that every table exists (fourteen queries, about 1.7 ms, ten
times a submission); on a shared engine that check runs once: the file is always
the template's, whose tables nbgrader made, and a try only adds rows. Drawing the
feedback pages opens the course's gradebook once per page and writes no table: that
step shares its engine the same way while it runs (`engine_shared_while`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbgrader.api
from sqlalchemy import create_engine, event
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


class SharedEngine:
    """nbgrader's engine factory, handing the one engine of each shared gradebook URL to every `Gradebook` of the process.

    nbgrader builds each gradebook's engine with the `create_engine` its api module
    imported, so that name is where the worker's factory goes; every other URL
    gets a new engine from SQLAlchemy, as before. Installed once per process and
    shared by its scratch graders (a cluster worker may keep several).
    """

    def __init__(self) -> None:
        self.engines: dict[str, Engine | None] = {}  # shared URL -> its engine, once nbgrader asked for it
        self.tables_checked: set[str] = set()  # shared URLs whose tables nbgrader's create_all has checked

    def __call__(self, url: Any, *args: Any, **kwargs: Any) -> Engine:
        key = str(url)
        if key not in self.engines:
            return create_engine(url, *args, **kwargs)
        engine = self.engines[key]
        if engine is None:
            engine = self.engines[key] = create_engine(url, *args, **kwargs)
        return engine

    def shared_url(self, engine: object) -> str | None:
        return next((url for url, shared in self.engines.items() if shared is engine), None)

    @classmethod
    def installed(cls) -> SharedEngine:
        factory = nbgrader.api.create_engine
        if not isinstance(factory, SharedEngine):
            factory = nbgrader.api.create_engine = cls()
            metadata = nbgrader.api.Base.metadata
            metadata.create_all = TablesCheckedOnce(metadata.create_all, factory)
        return factory


class TablesCheckedOnce:
    """nbgrader's `Base.metadata.create_all`, run once per shared engine and every time for any other."""

    def __init__(self, create_all: Any, shared: SharedEngine) -> None:
        self.create_all = create_all
        self.shared = shared

    def __call__(self, bind: Any = None, *args: Any, **kwargs: Any) -> None:
        url = self.shared.shared_url(bind)
        if url is not None and url in self.shared.tables_checked:
            return
        self.create_all(bind, *args, **kwargs)
        if url is not None:
            self.shared.tables_checked.add(url)


def share_engine(url: str) -> None:
    """From now on every `Gradebook` of `url` in this process uses one engine."""
    SharedEngine.installed().engines.setdefault(url, None)


def close_connections(url: str) -> None:
    """Close the shared engine's idle connections: the next ones open the file as it is now (rewritten, say)."""
    engine = SharedEngine.installed().engines.get(url)
    if engine is not None:
        engine.dispose()


def stop_sharing(url: str) -> None:
    close_connections(url)
    shared = SharedEngine.installed()
    shared.engines.pop(url, None)
    shared.tables_checked.discard(url)


@contextlib.contextmanager
def engine_shared_while(url: str) -> Iterator[None]:
    """Every `Gradebook` of `url` in this process uses one engine until the block ends (unless it already did).

    For a step that opens one gradebook many times and writes no table (feedback pages: nbgrader
    opens it for every page): its statements are compiled once and its tables checked once.
    """
    if url in SharedEngine.installed().engines:
        yield
        return
    share_engine(url)
    try:
        yield
    finally:
        stop_sharing(url)


def _main_file(connection: sqlite3.Connection) -> Path | None:
    """The file of the connection's main database; None for one in memory."""
    for _, name, file in connection.execute("PRAGMA database_list").fetchall():
        if name == "main" and file:
            return Path(file).resolve()
    return None
