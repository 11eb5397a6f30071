"""The gradebook's copy: consistent while another connection writes, loaded back whole, PostgreSQL's tools named."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gradekit.grading.gradebook_copy import (
    POSTGRES_MEMBER,
    SQLITE_MEMBER,
    GradebookCopyError,
    copy_gradebook,
    gradebook_member,
    gradebook_present,
    load_gradebook,
    sqlite_file,
    sqlite_path,
)

pytestmark = pytest.mark.unit
PG_URL = "postgresql://grader:secret@127.0.0.1:1/gradebook"


def test_sqlite_is_copied_with_what_was_committed_while_a_writer_holds_a_transaction(tmp_path):
    source = tmp_path / "gradebook.db"
    writer = sqlite3.connect(source)
    writer.execute("CREATE TABLE assignment (name TEXT)")
    writer.execute("INSERT INTO assignment VALUES ('autograd')")
    writer.commit()
    writer.execute("INSERT INTO assignment VALUES ('uncommitted')")  # a grading run in the middle of a write
    copy = copy_gradebook(f"sqlite:///{source}")
    writer.rollback()
    writer.close()
    target = tmp_path / "restored" / "gradebook.db"
    load_gradebook(f"sqlite:///{target}", copy)
    restored = sqlite3.connect(target)
    assert restored.execute("SELECT name FROM assignment").fetchall() == [("autograd",)]
    restored.close()
    assert gradebook_present(f"sqlite:///{target}")


def test_a_missing_gradebook_is_named_and_an_empty_folder_has_none(tmp_path):
    with pytest.raises(GradebookCopyError, match="no gradebook at"):
        copy_gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}")
    assert not gradebook_present(f"sqlite:///{tmp_path / 'gradebook.db'}")
    assert not (tmp_path / "gradebook.db").exists()  # asking made no file


def test_a_damaged_copy_is_refused_and_the_gradebook_there_kept(tmp_path):
    target = tmp_path / "gradebook.db"
    target.write_bytes(b"the gradebook as it was")
    with pytest.raises(GradebookCopyError, match="not a SQLite database"):
        load_gradebook(f"sqlite:///{target}", b"garbage" * 200)
    assert target.read_bytes() == b"the gradebook as it was"
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.db"]


def test_each_kind_has_its_member_and_a_missing_pg_dump_says_what_to_install(tmp_path, monkeypatch):
    assert gradebook_member(f"sqlite:///{tmp_path}/gradebook.db") == SQLITE_MEMBER
    assert gradebook_member(PG_URL) == POSTGRES_MEMBER
    monkeypatch.setenv("PATH", str(tmp_path))  # no PostgreSQL client tools on it
    with pytest.raises(GradebookCopyError, match="pg_dump is not installed.*postgresql-client"):
        copy_gradebook(PG_URL)


def test_a_sqlite_gradebooks_file_is_read_from_its_address_whatever_the_driver_and_other_databases_have_none():
    assert sqlite_file("sqlite:////srv/course/gradebook.db") == Path("/srv/course/gradebook.db")
    assert sqlite_file("sqlite:///gradebook.db") == Path("gradebook.db")  # relative to where the course runs
    assert sqlite_file("sqlite+pysqlite:////srv/course/gradebook.db") == Path("/srv/course/gradebook.db")
    assert sqlite_file("sqlite://") is None and sqlite_file("sqlite:///:memory:") is None
    assert sqlite_file("postgresql://grader@localhost/course") is None
    with pytest.raises(GradebookCopyError, match="not a SQLite gradebook in a file"):
        sqlite_path("sqlite://")
