"""Reading a file someone else made: regular, bounded, never followed, never waited on."""

import os
import threading

import pytest

from gradekit.core.bounded_files import RefusedFile, read_bounded

pytestmark = pytest.mark.unit


def test_a_regular_file_within_the_limit_is_read_whole(tmp_path):
    path = tmp_path / "reply.bin"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100


def test_a_file_over_the_limit_is_refused_unread(tmp_path):
    path = tmp_path / "notebook.ipynb"
    path.write_bytes(b"x" * 101)
    with pytest.raises(RefusedFile, match="101 bytes, more than the 100 allowed"):
        read_bounded(path, 100)


def test_keep_head_cuts_a_long_file_to_its_first_bytes(tmp_path):
    path = tmp_path / "guard.jsonl"
    path.write_bytes(b"0123456789")
    assert read_bounded(path, 4, keep_head=True) == b"0123"


def test_a_symbolic_link_is_not_followed(tmp_path):
    (tmp_path / "target.txt").write_text("a classmate's work")
    (tmp_path / "link.txt").symlink_to(tmp_path / "target.txt")
    with pytest.raises(OSError) as refused:
        read_bounded(tmp_path / "link.txt", 1000)
    assert not isinstance(refused.value, RefusedFile)  # open itself refused it: ELOOP


def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path):
    path = tmp_path / "010_history.ipynb"
    os.mkfifo(path)
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(_refusal(path)), daemon=True)
    reader.start()
    reader.join(timeout=5)
    assert outcome == ["010_history.ipynb is not a regular file"]


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(RefusedFile, match="is not a regular file"):
        read_bounded(tmp_path, 1000)


def _refusal(path):
    try:
        read_bounded(path, 1000)
    except RefusedFile as error:
        return str(error)
    return "read"
