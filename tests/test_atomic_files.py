"""Files written whole or not at all."""

import pytest

from gradekit.core.atomic_files import atomic_write

pytestmark = pytest.mark.unit


def test_the_file_appears_whole_and_nothing_is_left_beside_it(tmp_path):
    target = tmp_path / "grades.csv"
    target.write_text("old")
    atomic_write(target, b"new,rows\n")
    assert target.read_bytes() == b"new,rows\n"
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_partial(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("old")
    with pytest.raises(TypeError):
        atomic_write(target, "not bytes")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
