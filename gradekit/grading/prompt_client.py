"""A kernel client that stops waiting for a new kernel as soon as the kernel is ready.

jupyter_client's own wait ends by draining IOPub until it has been quiet for
0.2 s; with a fresh kernel per notebook that idle wait was a large share of a
short notebook's grading time. Here the wait ends when the kernel has answered
a kernel_info request on the shell channel and reported itself idle after that
request on IOPub. The second condition proves IOPub is subscribed, so no
output of the first cell can be missed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from queue import Empty
from typing import Any

import zmq
from jupyter_client.asynchronous import AsyncKernelClient

REPLY_SECONDS = 1.0  # how long one kernel_info request is given before it is sent again
# The idle status follows the reply within milliseconds when IOPub is subscribed;
# when it is not yet, the status is lost and only a new request can tell.
IDLE_SECONDS = 0.05
RECONNECT_MILLISECONDS = 10


class PromptKernelClient(AsyncKernelClient):
    def start_channels(self, *args: bool, **kwargs: bool) -> None:
        # The channels connect before the kernel has bound its ports; zmq then
        # retries every 100 ms by default, which a forked kernel mostly spent waiting.
        self.context.setsockopt(zmq.RECONNECT_IVL, RECONNECT_MILLISECONDS)
        super().start_channels(*args, **kwargs)

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while time.monotonic() < deadline:
            request = self.kernel_info()
            reply = await self._message_about(self.shell_channel, request, _any_message, REPLY_SECONDS)
            if reply is not None and await self._message_about(self.iopub_channel, request, _idle_status, IDLE_SECONDS):
                self._handle_kernel_info_reply(reply)
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
        raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    async def _message_about(
        self, channel: Any, request: str, wanted: Callable[[dict], bool], seconds: float
    ) -> dict | None:
        """The first message on `channel` answering `request` that `wanted` accepts, or None after `seconds`."""
        give_up = time.monotonic() + seconds
        while (left := give_up - time.monotonic()) > 0:
            try:
                message = await channel.get_msg(timeout=left)
            except Empty:
                return None
            if message.get("parent_header", {}).get("msg_id") == request and wanted(message):
                return message
        return None


def _any_message(message: dict) -> bool:
    return True


def _idle_status(message: dict) -> bool:
    return message.get("msg_type") == "status" and message.get("content", {}).get("execution_state") == "idle"
