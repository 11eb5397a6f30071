"""A grading kernel's folder: every entry made by the grader before the kernel starts, and only plain support files copied."""

import os
import stat

import pytest

from gradekit.grading.kernel_folders import SUPPORT_FILE_BYTES, UNCONFINED_TMP, KernelFolder
from gradekit.sandbox import kernel_box

pytestmark = pytest.mark.unit


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def notebook_dir(tmp_path):
    """A submission's folder: a notebook, its support module and data, and what must never be copied."""
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "010_history.ipynb").write_text("{}")
    (folder / "helpers.py").write_text("ANSWER = 42\n")
    (folder / "weights.bin").write_bytes(b"\x00\x01")
    (folder / "notes.txt").write_text("a plain file")
    (folder / "link.txt").symlink_to(folder / "notes.txt")
    os.mkfifo(folder / "pipe")
    (folder / "subfolder").mkdir()
    with open(folder / "huge.bin", "wb") as huge:
        huge.truncate(SUPPORT_FILE_BYTES + 1)
    return folder


def test_a_boxed_kernels_folder_holds_its_mailbox_and_sockets_and_the_plain_support_files(tmp_path, notebook_dir):
    folder = KernelFolder.make(tmp_path, str(notebook_dir), boxed=True)
    assert folder.path.parent == tmp_path and folder.boxed
    for entry in (folder.request, folder.reply, folder.guard_log):
        assert entry.is_file() and entry.stat().st_size == 0 and mode(entry) == 0o600
    assert folder.sockets.is_dir() and mode(folder.sockets) == 0o700
    assert folder.connection_file == folder.path / kernel_box.CONNECTION
    assert (folder.path / "mailbox").is_dir()
    work = folder.path / kernel_box.WORK
    assert sorted(p.name for p in work.iterdir()) == ["helpers.py", "notes.txt", "weights.bin"]
    assert (work / "weights.bin").read_bytes() == b"\x00\x01" and not (work / "helpers.py").is_symlink()
    assert folder.kernel_tmp() == "/tmp"  # the box's own tmpfs
    assert not (folder.path / UNCONFINED_TMP).exists()


def test_an_unconfined_kernel_gets_a_private_tmp_and_no_copies(tmp_path, notebook_dir):
    folder = KernelFolder.make(tmp_path, str(notebook_dir), boxed=False)
    assert folder.kernel_tmp() == str(folder.path / UNCONFINED_TMP)
    assert mode(folder.path / UNCONFINED_TMP) == 0o700
    assert list((folder.path / kernel_box.WORK).iterdir()) == []


def test_a_notebook_folder_that_is_gone_gives_an_empty_working_copy_and_remove_takes_it_all(tmp_path):
    folder = KernelFolder.make(tmp_path, str(tmp_path / "vanished"), boxed=True)
    assert list((folder.path / kernel_box.WORK).iterdir()) == []
    folder.remove()
    assert not folder.path.exists()
    folder.remove()  # twice is harmless
