"""The pre-check's saved state: written whole or not at all, in a folder of its own, read back even when damaged."""

import pytest

from gradekit.precheck.state import StateFolder, student_file

pytestmark = pytest.mark.unit


def test_a_file_is_replaced_whole_and_leaves_no_temporary_file_behind(tmp_path):
    kept = StateFolder(tmp_path / "kept")
    kept.write("limits", {"n": 1})
    kept.write("limits", {"n": 2})
    assert kept.read("limits") == {"n": 2}
    assert sorted(path.name for path in kept.folder.iterdir()) == ["limits.json", "limits.json.previous"]
    assert kept.folder.stat().st_mode & 0o777 == 0o700


def test_a_damaged_file_is_reported_and_its_previous_version_read(tmp_path, caplog):
    kept = StateFolder(tmp_path / "kept")
    kept.write("limits", {"n": 1})
    kept.write("limits", {"n": 2})
    kept.path("limits").write_bytes(b'{"n": ')
    assert kept.read("limits") == {"n": 1}
    assert "cannot be read" in caplog.text
    (kept.folder / "limits.json.previous").unlink()
    assert kept.read("limits") is None  # nothing readable: nothing restored, and no error raised


def test_a_rename_cut_short_still_finds_the_previous_version(tmp_path):
    kept = StateFolder(tmp_path / "kept")
    kept.write(student_file("ana"), {"n": 1})
    kept.write(student_file("ana"), {"n": 2})
    kept.path(student_file("ana")).unlink()  # stopped between the two renames
    assert kept.names("results-") == [student_file("ana")]
    assert kept.read(student_file("ana")) == {"n": 1}


def test_a_students_file_name_holds_nothing_of_their_name():
    assert student_file("../../etc/passwd").startswith("results-") and "/" not in student_file("../../etc/passwd")
    assert student_file("ana") != student_file("ben")
