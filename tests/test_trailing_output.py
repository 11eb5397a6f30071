"""The wait for a cell's last outputs: it lasts while messages keep coming, and ends on the kernel's silence."""

import asyncio
import time

import pytest

from gradekit.grading.trailing_output import await_trailing_output

pytestmark = pytest.mark.unit

QUIET = 0.1  # seconds


def _wait(outputs_after: float | None, last_arrival, at_most: float = 60.0):
    """The wait on a stream that ends after `outputs_after` seconds (never, for None): (the stream's task, timed out)."""

    async def scenario():
        stream = asyncio.ensure_future(asyncio.sleep(3600 if outputs_after is None else outputs_after))
        try:
            await await_trailing_output(stream, QUIET, at_most, last_arrival)
        except asyncio.TimeoutError:
            await asyncio.sleep(0)  # let the cancellation land
            return stream, True
        return stream, False

    return asyncio.run(scenario())


def test_a_stream_that_keeps_coming_is_waited_for_past_the_quiet_time():
    stream, timed_out = _wait(outputs_after=4 * QUIET, last_arrival=time.monotonic)
    assert not timed_out and stream.done() and not stream.cancelled()


def test_a_kernel_silent_for_the_quiet_time_ends_the_wait_and_the_reading():
    long_ago = time.monotonic() - 3600
    stream, timed_out = _wait(outputs_after=None, last_arrival=lambda: long_ago)
    assert timed_out and stream.cancelled()


def test_a_stream_that_never_ends_is_given_up_on_at_the_bound():
    started = time.monotonic()
    stream, timed_out = _wait(outputs_after=None, last_arrival=time.monotonic, at_most=3 * QUIET)
    assert timed_out and stream.cancelled() and time.monotonic() - started >= 3 * QUIET
