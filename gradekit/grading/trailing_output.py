"""The wait for a cell's last outputs once its reply has come: judged on the kernel, not on the grader's pace.

A kernel sends a cell's reply, then the outputs still queued, then the word that it is idle. nbclient
waits a fixed few seconds in all for those last messages and, with nbgrader's settings, ends the cell as
one that ignored its interrupt. A cell that finished within its limit but left a long stream of output
behind it (large images, say) then lost every cell after it whenever the grader read slowly: on a loaded
machine the grader's own decoding of the stream outlasted the wait.

Here the grader's reading costs the kernel nothing. What the kernel gets after its reply is what nbclient
meant to give it: `quiet_seconds` of silence in all (the grader waiting with no message ready) and as many
seconds of CPU, for code that runs on after the reply (a hook of the kernel's own, a thread) could otherwise
compute or trickle output unclocked. A stream past `at_most` seconds in all is given up on as well.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

# How often the kernel's silence and CPU are looked at while the grader reads (cpu_clock.py's period).
LOOK_SECONDS = 0.25


async def await_trailing_output(
    outputs: asyncio.Future[Any],
    quiet_seconds: float,
    at_most: float,
    silence: Callable[[], float],
    cpu: Callable[[], float],
) -> None:
    """Wait for `outputs` (nbclient's task reading the cell's messages to its end).

    `silence` and `cpu` are the kernel's seconds of each since the reply. Raises asyncio.TimeoutError,
    with the task cancelled, once either reaches `quiet_seconds` or `at_most` seconds pass in all.
    """
    give_up = time.monotonic() + at_most
    while True:
        try:
            await asyncio.wait_for(asyncio.shield(outputs), max(min(LOOK_SECONDS, give_up - time.monotonic()), 0.0))
            return
        except asyncio.TimeoutError:
            if silence() >= quiet_seconds or cpu() >= quiet_seconds or time.monotonic() >= give_up:
                outputs.cancel()
                raise
