"""Every pre-check request is sent once: a reused nonce is a replay, an old request is stale, a bad one is refused."""

import pytest
from precheck_fixtures import Clock

from gradekit.precheck.nonces import NonceBook
from gradekit.precheck.refusals import Reason

pytestmark = pytest.mark.unit
NONCE = "0123456789abcdef0123"


def test_a_fresh_request_is_accepted_once_and_its_replay_is_refused():
    clock = Clock()
    book = NonceBook(window_seconds=300, clock=clock)
    assert book.accept(NONCE, clock.now) is None
    clock.now += 5
    replay = book.accept(NONCE, clock.now - 5)
    assert replay is not None and replay.reason is Reason.REPLAYED
    assert "already received" in replay.message


def test_a_request_older_than_the_window_is_stale_so_a_forgotten_nonce_cannot_be_replayed():
    clock = Clock()
    book = NonceBook(window_seconds=300, clock=clock)
    sent = clock.now
    assert book.accept(NONCE, sent) is None
    clock.now += 301
    stale = book.accept(NONCE, sent)
    assert stale is not None and stale.reason is Reason.STALE
    assert len(book) == 0  # remembered no longer than the window


def test_a_request_from_the_future_beyond_the_window_is_stale():
    clock = Clock()
    refusal = NonceBook(300, clock).accept(NONCE, clock.now + 301)
    assert refusal is not None and refusal.reason is Reason.STALE


@pytest.mark.parametrize("nonce", [None, "", "short", "has spaces in it here", 12345678901234567])
def test_a_missing_or_malformed_nonce_is_a_bad_request(nonce):
    clock = Clock()
    refusal = NonceBook(300, clock).accept(nonce, clock.now)
    assert refusal is not None and refusal.reason is Reason.BAD_REQUEST


@pytest.mark.parametrize("sent", [None, "now", True, float("nan"), float("inf")])  # NaN would pass any window
def test_a_request_that_does_not_say_when_it_was_sent_is_a_bad_request(sent):
    clock = Clock()
    refusal = NonceBook(300, clock).accept(NONCE, sent)
    assert refusal is not None and refusal.reason is Reason.BAD_REQUEST


def test_the_nonces_inside_the_window_are_read_back_and_older_ones_dropped():
    clock = Clock()
    book = NonceBook(300, clock)
    assert book.accept(NONCE, clock.now) is None
    clock.now += 200
    assert book.accept("f" * 20, clock.now) is None
    saved = book.snapshot()
    clock.now += 150  # the first is now out of the window, the second still in it
    again = NonceBook(300, clock)
    again.restore(saved | {"seen": saved["seen"] | {"bad nonce": 1.0}})
    assert len(again) == 1
    replay = again.accept("f" * 20, clock.now - 150)
    assert replay is not None and replay.reason is Reason.REPLAYED
