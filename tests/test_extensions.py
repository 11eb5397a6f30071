"""Per-student extensions: granted only when every part is right, kept whole in one file, read back by every stage."""

import datetime
import json
import re

import pytest

from gradekit.core.extensions import BadExtension, Extension, due_for, grant, read_extensions

pytestmark = pytest.mark.unit

UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 12, 18, 23, 0, tzinfo=UTC)
NOW = datetime.datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
STUDENTS = frozenset({"ana", "ben"})


def test_an_extension_is_written_and_read_back_and_replaces_an_earlier_one(tmp_path):
    path = tmp_path / "extensions.json"
    grant(path, "ben", "2026-12-22T23:00:00+00:00", "ill for a week", DUE, STUDENTS, NOW)
    grant(path, "ben", "2026-12-23T12:00:00+01:00", " ill for longer ", DUE, STUDENTS, NOW)
    grant(path, "ana", "2026-12-19T09:00:00+00:00", "a funeral", DUE, STUDENTS, NOW)
    read = read_extensions(path)
    assert list(read) == ["ana", "ben"]
    assert read["ben"] == Extension("ben", datetime.datetime(2026, 12, 23, 11, 0, tzinfo=UTC), "ill for longer", NOW)
    assert json.loads(path.read_text())["ana"] == {
        "until": "2026-12-19T09:00:00+00:00",
        "why": "a funeral",
        "granted_at": "2026-12-02T10:00:00+00:00",
    }
    assert [p.name for p in tmp_path.iterdir()] == ["extensions.json"]


@pytest.mark.parametrize(
    "student, until, why, due, said",
    [
        ("cai", "2026-12-22T23:00:00+00:00", "ill", DUE, "'cai' is not a student of the course"),
        ("ben", "2026-12-22T23:00:00", "ill", DUE, "has no time zone"),
        ("ben", "next friday", "ill", DUE, "is not an ISO 8601 date"),
        ("ben", "2026-12-18T22:00:00+00:00", "ill", DUE, "is not after the due date, 2026-12-18T23:00:00+00:00"),
        ("ben", "2026-12-22T23:00:00+00:00", "  ", DUE, "--why must say why"),
        ("ben", "2026-12-22T23:00:00+00:00", "ill", None, "has no due date to extend"),
    ],
)
def test_a_bad_grant_is_refused_with_its_reason_and_changes_nothing(tmp_path, student, until, why, due, said):
    path = tmp_path / "extensions.json"
    grant(path, "ana", "2026-12-19T09:00:00+00:00", "a funeral", DUE, STUDENTS, NOW)
    before = path.read_bytes()
    with pytest.raises(BadExtension, match=re.escape(said)):
        grant(path, student, until, why, due, STUDENTS, NOW)
    assert path.read_bytes() == before


def test_a_students_deadline_is_their_extension_else_the_due_date(tmp_path):
    extensions = {"ben": Extension("ben", DUE + datetime.timedelta(days=3), "ill", NOW)}
    assert due_for(DUE, extensions, "ben") == DUE + datetime.timedelta(days=3)
    assert due_for(DUE, extensions, "ana") == DUE
    assert due_for(None, {}, "ana") is None
    assert read_extensions(tmp_path / "absent.json") == {}


def test_a_damaged_file_is_a_clear_error(tmp_path):
    path = tmp_path / "extensions.json"
    path.write_text('{"ben": {"until": "2026-12-22T23:00:00"}}')
    with pytest.raises(BadExtension, match="is not a file of extensions"):
        read_extensions(path)
