"""The sealed exchange's mailbox: the grader writes into the request file it made, rings the kernel's bell, hears
that it answered and reads back a bounded reply."""

import asyncio
import contextlib
import os
import random
import threading

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


# The bell and the answered FIFO, with the kernel's ends opened as answer_server.py opens them.


def _kernel_ends(mailbox: Mailbox) -> tuple[int, int]:
    flags = os.O_RDWR | os.O_NONBLOCK
    return os.open(mailbox.folder.bell, flags), os.open(mailbox.folder.answered, flags)


def _heard(mailbox: Mailbox, seconds: float = 5.0) -> str | None:
    return asyncio.run(mailbox.answered(seconds))


def test_a_ring_reaches_the_kernel_and_what_it_says_back_is_heard(mailbox):
    bell, answered = _kernel_ends(mailbox)
    mailbox.post(b"a request")
    mailbox.ring()
    assert os.read(bell, 64) == sealed_exchange.RING
    os.write(answered, sealed_exchange.ANSWERED)
    assert _heard(mailbox) == "ok"
    mailbox.post(b"the next request")
    mailbox.ring()
    os.write(answered, sealed_exchange.FAILED)
    assert _heard(mailbox) == "error"


def test_what_the_kernel_said_before_a_call_is_forgotten_when_the_call_is_posted(mailbox):
    _, answered = _kernel_ends(mailbox)
    mailbox.post(b"first")
    os.write(answered, sealed_exchange.ANSWERED * 1000)  # said ahead of time, for calls not yet made
    mailbox.post(b"second")
    assert _heard(mailbox, 0.05) is None


def test_a_kernel_that_never_stops_writing_cannot_hold_the_grader_in_forgetting(mailbox):
    _, answered = _kernel_ends(mailbox)
    mailbox.post(b"first")
    writing = threading.Event()
    writing.set()

    def flood():
        while writing.is_set():
            with contextlib.suppress(BlockingIOError):
                os.write(answered, sealed_exchange.ANSWERED * 4096)

    flooder = threading.Thread(target=flood)
    flooder.start()
    try:
        mailbox.post(b"second")  # returns after a bounded number of reads
    finally:
        writing.clear()
        flooder.join()


def test_a_bell_nobody_listens_to_leaves_the_call_to_the_keepers_schedule(mailbox):
    """The kernel died (or closed its end): the keeper finds it dead, or holds it to the cell's clock; no error here."""
    mailbox.post(b"first")
    mailbox.ring()
    assert mailbox._silent and _heard(mailbox, 0.05) is None
    bell, answered = _kernel_ends(mailbox)  # a kernel listening by the next call is heard again
    mailbox.post(b"second")
    mailbox.ring()
    assert os.read(bell, 64) == sealed_exchange.RING
    os.write(answered, sealed_exchange.ANSWERED)
    assert _heard(mailbox) == "ok"


def test_a_full_bell_is_rung_already(mailbox):
    bell, _ = _kernel_ends(mailbox)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(bell, b"\x01" * 4096)
    mailbox.post(b"first")
    mailbox.ring()


def test_a_kernel_that_closed_its_end_leaves_the_wait_to_the_keepers_clock(mailbox):
    bell, answered = _kernel_ends(mailbox)
    mailbox.post(b"first")
    os.close(answered)
    assert _heard(mailbox, 0.05) is None  # nothing to hear, however ready an ended FIFO reads
    assert mailbox._silent
    assert _heard(mailbox, 0.05) is None
    os.close(bell)


def test_a_mailbox_fifo_that_is_no_fifo_is_refused(tmp_path):
    folder = KernelFolder.make(tmp_path, str(tmp_path), boxed=False)
    folder.answered.unlink()
    folder.answered.write_bytes(b"o")
    with pytest.raises(CrossingError, match="other than the FIFO"):
        Mailbox(folder).post(b"first")


def test_a_word_read_just_as_a_wait_timed_out_is_heard_by_the_next_wait(mailbox):
    """Waits far shorter than the answers (the keeper reads its clock between them): every word is heard, none dropped."""
    _, answered = _kernel_ends(mailbox)

    async def call() -> bool:
        mailbox.post(b"a call")
        mailbox.ring()
        loop = asyncio.get_running_loop()
        loop.call_later(random.uniform(0, 0.006), os.write, answered, sealed_exchange.ANSWERED)
        give_up = loop.time() + 1.0
        while loop.time() < give_up:
            if await mailbox.answered(0.002) is not None:
                return True
        return False

    async def calls() -> list[bool]:
        return [await call() for _ in range(200)]

    assert all(asyncio.run(calls()))
