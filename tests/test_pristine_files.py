"""Kept files are put back as fresh copies: whatever a run changed, added, linked or replaced ends as it was kept."""

import os
import stat

import pytest

from gradekit.grading.pristine_files import PristineFiles, holds

pytestmark = pytest.mark.unit

KEPT = (("source/a/one.ipynb", b"first"), ("source/a/helper.py", b"second"), ("gradebook.db", b"grades"))


def _written(root):
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def _inode(path):
    return os.lstat(path).st_ino


@pytest.fixture
def restored(tmp_path):
    kept = PristineFiles(KEPT, folders=("source",))
    kept.restore(tmp_path)
    return kept, tmp_path


def test_an_empty_root_gets_every_kept_file(restored):
    _, root = restored
    assert _written(root) == dict(KEPT)


def test_what_no_run_touched_stays_where_it_is_and_a_changed_gradebook_is_written_afresh(restored):
    kept, root = restored
    helper = _inode(root / "source/a/helper.py")
    (root / "gradebook.db").write_bytes(b"grades of the last student")
    kept.restore(root)
    assert _written(root) == dict(KEPT)
    assert _inode(root / "source/a/helper.py") == helper  # untouched: not written again


def test_what_a_run_changed_added_removed_or_replaced_is_put_back(restored):
    kept, root = restored
    (root / "source/a/one.ipynb").unlink()
    (root / "source/a/one.ipynb").mkdir()  # a folder in a file's place
    (root / "source/a/added.py").write_bytes(b"planted")
    (root / "source/b/deep").mkdir(parents=True)
    (root / "source/b/deep/x").write_bytes(b"planted")
    os.symlink(root / "gradebook.db", root / "source/link")
    kept.restore(root)
    assert _written(root) == dict(KEPT)
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == [
        "gradebook.db",
        "source",
        "source/a",
        "source/a/helper.py",
        "source/a/one.ipynb",
    ]


def test_a_kept_file_linked_from_elsewhere_is_a_fresh_copy_after_the_restore(restored, tmp_path_factory):
    kept, root = restored
    outside = tmp_path_factory.mktemp("outside") / "same-file"
    os.link(root / "source/a/one.ipynb", outside)
    kept.restore(root)
    outside.write_bytes(b"FIRST")  # the same size, through the other name
    assert (root / "source/a/one.ipynb").read_bytes() == b"first"
    assert os.lstat(root / "source/a/one.ipynb").st_nlink == 1


def test_modes_and_times_a_run_changed_are_those_of_a_fresh_copy_again(restored):
    kept, root = restored
    file_mode, folder_mode = os.lstat(root / "source/a/helper.py").st_mode, os.lstat(root / "source/a").st_mode
    os.chmod(root / "source/a/helper.py", 0o666)
    os.chmod(root / "source/a", 0o777)
    os.utime(root / "source/a/one.ipynb", (0, 0))
    kept.restore(root)
    assert os.lstat(root / "source/a/helper.py").st_mode == file_mode
    assert os.lstat(root / "source/a").st_mode == folder_mode
    assert os.lstat(root / "source/a/one.ipynb").st_mtime > 0


def test_a_link_in_a_kept_files_place_is_replaced_even_when_it_reads_the_same(restored, tmp_path_factory):
    kept, root = restored
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "helper.py"
    elsewhere.write_bytes(b"second")
    (root / "source/a/helper.py").unlink()
    os.symlink(elsewhere, root / "source/a/helper.py")
    kept.restore(root)
    assert not (root / "source/a/helper.py").is_symlink()
    assert _written(root) == dict(KEPT)


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


def test_a_pipe_or_an_endless_file_in_a_kept_files_place_is_never_read_to_its_end(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    assert not holds(tmp_path / "pipe", b"first")  # opened without waiting for a writer
    os.symlink("/dev/zero", tmp_path / "zeros")
    assert not holds(tmp_path / "zeros", b"\0" * 5)
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
