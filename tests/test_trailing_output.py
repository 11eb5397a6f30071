"""The wait for a cell's last outputs: the grader's reading is free; the kernel's silence and CPU are counted."""

import asyncio
import time

import pytest

from gradekit.grading.trailing_output import await_trailing_output

pytestmark = pytest.mark.unit

QUIET = 0.1  # seconds


def _nothing() -> float:
    return 0.0


def _wait(outputs_after: float | None, silence=_nothing, cpu=_nothing, at_most: float = 60.0):
    """The wait on a stream that ends after `outputs_after` seconds (never, for None): (the stream's task, timed out)."""

    async def scenario():
        stream = asyncio.ensure_future(asyncio.sleep(3600 if outputs_after is None else outputs_after))
        try:
            await await_trailing_output(stream, QUIET, at_most, silence, cpu)
        except asyncio.TimeoutError:
            await asyncio.sleep(0)  # let the cancellation land
            return stream, True
        return stream, False

    return asyncio.run(scenario())


def test_a_stream_the_grader_is_still_reading_is_waited_for_past_the_quiet_time():
    stream, timed_out = _wait(outputs_after=4 * QUIET)
    assert not timed_out and stream.done() and not stream.cancelled()


def test_a_kernel_silent_for_the_quiet_time_in_all_ends_the_wait_and_the_reading():
    stream, timed_out = _wait(outputs_after=None, silence=lambda: QUIET)
    assert timed_out and stream.cancelled()


def test_a_kernel_computing_after_its_reply_is_ended_once_it_used_the_quiet_time_in_cpu():
    stream, timed_out = _wait(outputs_after=None, cpu=lambda: QUIET)
    assert timed_out and stream.cancelled()


def test_a_stream_that_never_ends_is_given_up_on_at_the_bound():
    started = time.monotonic()
    stream, timed_out = _wait(outputs_after=None, at_most=3 * QUIET)
    assert timed_out and stream.cancelled() and time.monotonic() - started >= 3 * QUIET
