"""The worker's scratch gradebook skips the disk's confirmation; every other SQLite file keeps it."""

import pytest
from sqlalchemy import create_engine, text

from gradekit.grading.scratch_gradebook import UnsyncedGradebook

pytestmark = pytest.mark.unit

FULL, OFF = 2, 0  # SQLite's values of `PRAGMA synchronous`


def durability(path) -> tuple[int, str]:
    """(synchronous, journal_mode) of a fresh engine's connection to `path`, as nbgrader would make one."""
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            synchronous = connection.execute(text("PRAGMA synchronous")).scalar_one()
            journal = connection.execute(text("PRAGMA journal_mode")).scalar_one()
            return synchronous, journal
    finally:
        engine.dispose()


def test_only_the_scratch_gradebook_skips_the_wait_and_only_while_hooked(tmp_path):
    scratch, course = tmp_path / "scratch" / "gradebook.db", tmp_path / "gradebook.db"
    scratch.parent.mkdir()
    hook = UnsyncedGradebook(scratch.resolve()).install()
    try:
        assert hook.install() is hook  # a second install adds no second hook
        assert durability(scratch) == (OFF, "memory")
        assert durability(course) == (FULL, "delete")
    finally:
        hook.remove()
    assert durability(scratch) == (FULL, "delete")


def test_a_database_in_memory_is_left_alone(tmp_path):
    hook = UnsyncedGradebook((tmp_path / "gradebook.db").resolve()).install()
    try:
        assert durability(":memory:")[0] == FULL
    finally:
        hook.remove()
