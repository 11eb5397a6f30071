"""Kept files are put back exactly: changed, missing, replaced and added files all end as they were kept."""

import os

import pytest

from gradekit.grading.pristine_files import PristineFiles

pytestmark = pytest.mark.unit

KEPT = (("source/a/one.ipynb", b"first"), ("source/a/helper.py", b"second"), ("gradebook.db", b"grades"))


def _written(root):
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def test_an_empty_root_gets_every_kept_file(tmp_path):
    PristineFiles(KEPT, folders=("source",)).restore(tmp_path)
    assert _written(tmp_path) == dict(KEPT)


def test_what_a_run_changed_added_removed_or_replaced_is_put_back_and_the_rest_is_left_alone(tmp_path):
    kept = PristineFiles(KEPT, folders=("source",))
    kept.restore(tmp_path)
    untouched = os.stat(tmp_path / "source/a/helper.py").st_ino
    (tmp_path / "gradebook.db").write_bytes(b"grades of the last student")
    (tmp_path / "source/a/one.ipynb").unlink()
    (tmp_path / "source/a/one.ipynb").mkdir()  # a folder in a file's place
    (tmp_path / "source/a/added.py").write_bytes(b"planted")
    (tmp_path / "source/b/deep").mkdir(parents=True)
    (tmp_path / "source/b/deep/x").write_bytes(b"planted")
    os.symlink(tmp_path / "gradebook.db", tmp_path / "source/link")
    kept.restore(tmp_path)
    assert _written(tmp_path) == dict(KEPT)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "gradebook.db",
        "source",
        "source/a",
        "source/a/helper.py",
        "source/a/one.ipynb",
    ]
    assert os.stat(tmp_path / "source/a/helper.py").st_ino == untouched  # unchanged: not written again


def test_a_link_in_a_kept_files_place_is_replaced_even_when_it_reads_the_same(tmp_path):
    kept = PristineFiles(KEPT, folders=("source",))
    kept.restore(tmp_path)
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.write_bytes(b"second")
    (tmp_path / "source/a/helper.py").unlink()
    os.symlink(elsewhere, tmp_path / "source/a/helper.py")
    kept.restore(tmp_path)
    assert not (tmp_path / "source/a/helper.py").is_symlink()
    assert _written(tmp_path) == dict(KEPT)


def test_a_link_in_a_kept_folders_place_is_removed_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs").write_bytes(b"not ours to remove")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside, root / "source")
    PristineFiles(KEPT, folders=("source",)).restore(root)
    assert (outside / "theirs").read_bytes() == b"not ours to remove"
    assert _written(root) == dict(KEPT)
