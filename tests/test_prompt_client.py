"""The prompt kernel client: ready as soon as the kernel answered on the shell channel and said idle on IOPub."""

import asyncio
from queue import Empty

import pytest
from jupyter_client.manager import AsyncKernelManager

from gradekit.grading.prompt_client import PromptKernelClient


class ScriptedChannel:
    """A channel holding the messages a scripted kernel sent; empty means nothing more is coming."""

    def __init__(self):
        self.messages = []

    async def get_msg(self, timeout=None):
        if not self.messages:
            raise Empty
        return self.messages.pop(0)


class ScriptedClient(PromptKernelClient):
    """A client whose kernel answers each kernel_info request as its script says: ("reply", "idle") or less."""

    def __init__(self, script, alive=True):
        super().__init__()
        self.script, self.alive, self.sent = list(script), alive, []
        self._shell_channel, self._iopub_channel = ScriptedChannel(), ScriptedChannel()

    def kernel_info(self):
        request = f"request-{len(self.sent)}"
        self.sent.append(request)
        answers = self.script.pop(0) if self.script else ()
        parent = {"parent_header": {"msg_id": request}}
        if "reply" in answers:
            self._shell_channel.messages.append({**parent, "content": {"protocol_version": "5.3"}})
        if "idle" in answers:
            self._iopub_channel.messages.append(
                {**parent, "msg_type": "status", "content": {"execution_state": "busy"}}
            )
            self._iopub_channel.messages.append(
                {**parent, "msg_type": "status", "content": {"execution_state": "idle"}}
            )
        return request

    async def _async_is_alive(self):
        return self.alive


@pytest.mark.unit
def test_ready_at_the_first_request_answered_on_both_channels():
    client = ScriptedClient([("reply", "idle")])
    asyncio.run(client.wait_for_ready(timeout=5))
    assert client.sent == ["request-0"]


@pytest.mark.unit
def test_a_reply_without_its_idle_status_is_asked_again_as_iopub_may_not_listen_yet():
    client = ScriptedClient([("reply",), ("reply",), ("reply", "idle")])
    asyncio.run(client.wait_for_ready(timeout=5))
    assert client.sent == ["request-0", "request-1", "request-2"]


@pytest.mark.unit
def test_a_kernel_that_died_or_never_answers_is_an_error_not_a_wait():
    with pytest.raises(RuntimeError, match="Kernel died"):
        asyncio.run(ScriptedClient([], alive=False).wait_for_ready(timeout=5))
    with pytest.raises(RuntimeError, match="didn't respond in 0.2 seconds"):
        asyncio.run(ScriptedClient([]).wait_for_ready(timeout=0.2))


async def _first_cell_output(code: str) -> str:
    manager = AsyncKernelManager(
        kernel_name="python3", client_class="gradekit.grading.prompt_client.PromptKernelClient"
    )
    await manager.start_kernel()
    client = manager.client()
    try:
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        request = client.execute(code)
        text = ""
        while True:
            message = await client.get_iopub_msg(timeout=30)
            if message["parent_header"].get("msg_id") != request:
                continue
            if message["msg_type"] == "stream":
                text += message["content"]["text"]
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                return text
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


@pytest.mark.notebook
def test_a_real_kernel_is_ready_and_no_output_of_its_first_cell_is_missed():
    assert asyncio.run(_first_cell_output("print('the first cell')")) == "the first cell\n"
