"""The worker's scratch gradebook skips the disk's confirmation and keeps one engine (as feedback's gradebook does while
pages are drawn); every other SQLite file is as before."""

import shutil

import nbgrader.api
import pytest
from nbgrader.api import Gradebook
from sqlalchemy import create_engine, text

from gradekit.grading.scratch_gradebook import (
    UnsyncedGradebook,
    close_connections,
    engine_shared_while,
    share_engine,
    stop_sharing,
)

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


@pytest.fixture
def shared(tmp_path):
    """The URL of a gradebook whose engine this process shares, and of one it does not."""
    url, other = f"sqlite:///{tmp_path / 'scratch.db'}", f"sqlite:///{tmp_path / 'course.db'}"
    share_engine(url)
    yield url, other
    stop_sharing(url)


def test_every_gradebook_of_the_shared_file_gets_one_engine_and_other_files_their_own(shared):
    url, other = shared
    with Gradebook(url) as first, Gradebook(url) as second:
        assert first.engine is second.engine
    with Gradebook(url) as again, Gradebook(other) as course, Gradebook(other) as course_again:
        assert again.engine is first.engine
        assert course.engine is not course_again.engine and course.engine is not first.engine


def test_a_rewritten_file_is_read_as_it_is_now_once_connections_are_closed(shared, tmp_path):
    url, _ = shared
    with Gradebook(url) as gradebook:
        gradebook.add_student("ada")
    shutil.copy(tmp_path / "scratch.db", tmp_path / "pristine.db")
    unclosed = Gradebook(url)  # a step that failed before closing: its connection goes back to the pool, open
    unclosed.add_student("bob")
    unclosed.db.remove()
    close_connections(url)
    (tmp_path / "scratch.db").unlink()
    shutil.copy(tmp_path / "pristine.db", tmp_path / "scratch.db")
    with Gradebook(url) as gradebook:
        assert [student.id for student in gradebook.students] == ["ada"]


def test_once_no_longer_shared_each_gradebook_builds_its_engine_again(tmp_path):
    url = f"sqlite:///{tmp_path / 'scratch.db'}"
    share_engine(url)
    assert nbgrader.api.create_engine(url) is nbgrader.api.create_engine(url)
    stop_sharing(url)
    assert nbgrader.api.create_engine(url) is not nbgrader.api.create_engine(url)


def test_a_block_shares_the_engine_until_it_ends_and_leaves_a_share_it_did_not_start(tmp_path):
    url, other = f"sqlite:///{tmp_path / 'course.db'}", f"sqlite:///{tmp_path / 'scratch.db'}"
    with engine_shared_while(url):
        assert nbgrader.api.create_engine(url) is nbgrader.api.create_engine(url)
    assert nbgrader.api.create_engine(url) is not nbgrader.api.create_engine(url)
    share_engine(other)
    try:
        with engine_shared_while(other):
            pass
        assert nbgrader.api.create_engine(other) is nbgrader.api.create_engine(other)
    finally:
        stop_sharing(other)
    with pytest.raises(RuntimeError), engine_shared_while(url):
        raise RuntimeError("a page that failed")
    assert nbgrader.api.create_engine(url) is not nbgrader.api.create_engine(url)


def test_the_tables_of_a_shared_gradebook_are_checked_at_its_first_open_only_and_of_others_at_each(shared, monkeypatch):
    url, other = shared
    for made in (url, other):
        Gradebook(made).close()
    stop_sharing(url)
    share_engine(url)  # shared anew: its first open checks again
    checked = []
    create_all = nbgrader.api.Base.metadata.create_all
    monkeypatch.setattr(create_all, "create_all", lambda bind, *a, **k: checked.append(str(bind.url)))
    for _ in range(3):
        Gradebook(url).close()
        Gradebook(other).close()
    assert checked == [url, other, other, other]
