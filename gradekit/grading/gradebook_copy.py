"""A consistent copy of the gradebook while it may be in use, and its return into an empty course.

SQLite is copied with its online backup API (a reader never sees half a transaction; a grading
run may keep writing); PostgreSQL with `pg_dump` (one snapshot of the database) and loaded back
with `psql`. Both tools come from the PostgreSQL client package; a missing one is a clear error.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

from sqlalchemy import create_engine, inspect
from sqlalchemy.engine import make_url

SQLITE_MEMBER = "gradebook/gradebook.db"
POSTGRES_MEMBER = "gradebook/gradebook.sql"


class GradebookCopyError(RuntimeError):
    """The gradebook could not be copied or loaded; what to do is in the message."""


def is_sqlite(db_url: str) -> bool:
    return make_url(db_url).get_backend_name() == "sqlite"


def sqlite_path(db_url: str) -> Path:
    file = sqlite_file(db_url)
    if file is None:
        raise GradebookCopyError(f"{db_url} is not a SQLite gradebook in a file")
    return file


def sqlite_file(db_url: str) -> Path | None:
    """The file of a SQLite gradebook; None for any other database, or one SQLite keeps in memory."""
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def gradebook_member(db_url: str) -> str:
    """The archive's name for this gradebook's copy."""
    return SQLITE_MEMBER if is_sqlite(db_url) else POSTGRES_MEMBER


def copy_gradebook(db_url: str) -> bytes:
    """The gradebook's whole content: a SQLite database file, or PostgreSQL's plain SQL dump."""
    return _sqlite_copy(sqlite_path(db_url)) if is_sqlite(db_url) else _pg_dump(db_url)


def _sqlite_copy(source: Path) -> bytes:
    if not source.is_file():
        raise GradebookCopyError(f"no gradebook at {source}: grade the course once before backing it up")
    with tempfile.TemporaryDirectory(prefix="gradekit-gradebook-") as scratch:
        copy = Path(scratch) / "gradebook.db"
        reading = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        writing = sqlite3.connect(copy)
        try:
            reading.backup(writing)
        finally:
            writing.close()
            reading.close()
        return copy.read_bytes()


def _pg_dump(db_url: str) -> bytes:
    dumped = _run_tool("pg_dump", ["--no-owner", "--no-privileges", "--dbname", _libpq_url(db_url)], b"")
    return dumped


def _libpq_url(db_url: str) -> str:
    """SQLAlchemy's URL as libpq reads it (no `+driver` in the scheme)."""
    return make_url(db_url).set(drivername="postgresql").render_as_string(hide_password=False)


def _run_tool(tool: str, arguments: list[str], stdin: bytes) -> bytes:
    program = shutil.which(tool)
    if program is None:
        raise GradebookCopyError(
            f"{tool} is not installed: a PostgreSQL gradebook is copied with the PostgreSQL client tools "
            "(on Debian or Ubuntu: apt-get install postgresql-client)"
        )
    done = subprocess.run([program, *arguments], input=stdin, capture_output=True, check=False)
    if done.returncode != 0:
        raise GradebookCopyError(f"{tool} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def gradebook_present(db_url: str) -> bool:
    """Whether the course already has a gradebook with nbgrader's tables (which a restore would overwrite)."""
    if is_sqlite(db_url) and not sqlite_path(db_url).exists():
        return False
    engine = create_engine(db_url)
    try:
        with engine.connect() as connection:
            return inspect(connection).has_table("assignment")
    finally:
        engine.dispose()


def load_gradebook(db_url: str, copy: bytes) -> None:
    """Put `copy` (from `copy_gradebook`) in as the course's gradebook, replacing what is there."""
    if is_sqlite(db_url):
        _load_sqlite(sqlite_path(db_url), copy)
        return
    if gradebook_present(db_url):
        _drop_tables(db_url)
    _run_tool("psql", ["--quiet", "--set", "ON_ERROR_STOP=1", "--dbname", _libpq_url(db_url)], copy)


def _load_sqlite(target: Path, copy: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", delete=False) as staged:
        staged.write(copy)
    staged_path = Path(staged.name)
    try:
        _check_sqlite(staged_path)
        staged_path.replace(target)
    except BaseException:
        staged_path.unlink(missing_ok=True)
        raise


def _check_sqlite(path: Path) -> None:
    connection = sqlite3.connect(path)
    try:
        (verdict,) = connection.execute("PRAGMA integrity_check").fetchone()
    except sqlite3.DatabaseError as error:
        raise GradebookCopyError(f"the archive's gradebook is not a SQLite database: {error}") from None
    finally:
        connection.close()
    if verdict != "ok":
        raise GradebookCopyError(f"the archive's gradebook fails SQLite's integrity check: {verdict}")


def _drop_tables(db_url: str) -> None:
    from sqlalchemy import MetaData

    engine = create_engine(db_url)
    try:
        tables = MetaData()
        tables.reflect(engine)
        tables.drop_all(engine)
    finally:
        engine.dispose()
