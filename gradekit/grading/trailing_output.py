"""The wait for a cell's last outputs once its reply has come: judged on the kernel's silence, not on the grader's pace.

A kernel sends a cell's reply, then the outputs still queued, then the word that it is idle. nbclient
waits a fixed few seconds in all for those last messages and, with nbgrader's settings, ends the cell as
one that ignored its interrupt. A cell that finished within its limit but left a long stream of output
behind it (large images, say) then lost every cell after it whenever the grader read slowly: on a loaded
machine the grader's own decoding of the stream outlasted the wait. Here the wait lasts while messages
keep arriving; only a pause of `quiet_seconds` with nothing new is the kernel's, or the stream lasting
past `at_most` in all (what comes before the idle word is finite, but may be large).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


async def await_trailing_output(
    outputs: asyncio.Future[Any], quiet_seconds: float, at_most: float, last_arrival: Callable[[], float]
) -> None:
    """Wait for `outputs` (nbclient's task reading the cell's messages to its end).

    Raises asyncio.TimeoutError, with the task cancelled, once `quiet_seconds` pass with no message read
    (`last_arrival`, a time.monotonic() reading) or `at_most` seconds pass in all.
    """
    give_up = time.monotonic() + at_most
    while True:
        wait = min(quiet_seconds, give_up - time.monotonic())
        try:
            await asyncio.wait_for(asyncio.shield(outputs), max(wait, 0.0))
            return
        except asyncio.TimeoutError:
            now = time.monotonic()
            if now - last_arrival() >= quiet_seconds or now >= give_up:
                outputs.cancel()
                raise
