"""The sealed exchange's mailbox: the grader writes into the request file it made and reads back a bounded reply."""

import os

import pytest

from gradekit.grading import sealed_exchange
from gradekit.grading.kernel_folders import KernelFolder
from gradekit.grading.sealed_exchange import Mailbox
from gradekit.sandbox.crossing import CrossingError

pytestmark = pytest.mark.unit


@pytest.fixture
def mailbox(tmp_path):
    folder = KernelFolder.make(tmp_path, str(tmp_path), boxed=False)
    yield Mailbox(folder)
    folder.remove()


def _held(mailbox: Mailbox) -> int:
    assert mailbox._request is not None
    return mailbox._request


def test_each_request_replaces_the_last_in_the_same_file(mailbox):
    request = mailbox.folder.request
    made = request.stat().st_ino
    mailbox.post(b"a longer first request")
    mailbox.post(b"second")
    assert request.read_bytes() == b"second" and request.stat().st_ino == made


def test_a_link_put_at_the_path_later_is_never_written_through(mailbox, tmp_path):
    request, elsewhere = mailbox.folder.request, tmp_path / "grades.csv"
    elsewhere.write_bytes(b"student,score\n")
    mailbox.post(b"first")
    held = os.fstat(_held(mailbox)).st_ino
    request.unlink()
    request.symlink_to(elsewhere)
    mailbox.post(b"second")
    assert elsewhere.read_bytes() == b"student,score\n"
    assert os.fstat(_held(mailbox)).st_ino == held


def test_something_other_than_a_file_at_the_path_is_refused(tmp_path):
    folder = KernelFolder.make(tmp_path, str(tmp_path), boxed=False)
    folder.request.unlink()
    os.mkfifo(folder.request)
    with pytest.raises(OSError):  # a FIFO with no reader: refused at once, never waited on
        Mailbox(folder).post(b"first")
    folder.request.unlink()
    folder.request.mkdir()
    with pytest.raises((OSError, CrossingError)):
        Mailbox(folder).post(b"first")


def test_posting_empties_the_last_reply(mailbox):
    mailbox.folder.reply.write_bytes(b"the answer to the last call")
    mailbox.post(b"next")
    with pytest.raises(CrossingError, match="gave no answer"):
        mailbox.reply()


def test_a_reply_is_read_back_whole(mailbox):
    mailbox.folder.reply.write_bytes(b"an answer")
    assert mailbox.reply() == b"an answer"


def test_a_reply_past_its_bound_or_behind_a_link_is_refused(mailbox, tmp_path, monkeypatch):
    monkeypatch.setattr(sealed_exchange, "MAX_REPLY_BYTES", 8)
    mailbox.folder.reply.write_bytes(b"more than eight bytes")
    with pytest.raises(CrossingError, match="not a plain file of bounded size"):
        mailbox.reply()
    elsewhere = tmp_path / "classmate.ipynb"
    elsewhere.write_bytes(b"theirs")
    mailbox.folder.reply.unlink()
    mailbox.folder.reply.symlink_to(elsewhere)
    with pytest.raises(CrossingError, match="gave no answer"):
        mailbox.reply()


def test_closing_lets_go_of_the_request_file_and_a_later_post_opens_it_again(mailbox):
    mailbox.post(b"first")
    mailbox.close()
    assert mailbox._request is None
    mailbox.post(b"second")
    assert mailbox.folder.request.read_bytes() == b"second"
