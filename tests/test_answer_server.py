"""The kernel's answer server: what it replies to a request, whatever the student's code does, and what `install` sets up.

The wire itself (what crosses and how) is tested in test_crossing*.py, with this server answering.
"""

import asyncio
import builtins
import os
import random
import signal
import threading
import time
import warnings

import pytest
import torch
from ipykernel.ipkernel import IPythonKernel

from gradekit.grading.sealed_checks import RemoteAnswer
from gradekit.sandbox import crossing
from gradekit.sandbox.answer_server import ANSWERED, FAILED, answer_ring, install, respond
from gradekit.sandbox.crossing import Mirror

pytestmark = pytest.mark.unit


def reply_to(namespace, name, *args):
    """The kernel's decoded reply to a call of its `name` with `args`, both mirrors in this process."""
    kernel = Mirror("kernel", resolve_answer=namespace.__getitem__)
    grader = Mirror("grader", call=None)
    request = crossing.call_message(grader, RemoteAnswer(name, grader), args, {})
    return crossing.checked_reply(grader.incoming(respond(kernel, request, vars(crossing))))


def test_what_the_call_returns_comes_back_as_returned():
    assert reply_to({"double": lambda x: 2 * x}, "double", 21) == ("returned", 42)


def test_a_request_the_kernel_cannot_read_is_a_failed_call_not_the_students_error():
    grader = Mirror("grader", call=None)
    reply = crossing.checked_reply(grader.incoming(respond(Mirror("kernel"), b"not a message", vars(crossing))))
    assert reply[0] == "failed" and ":" in reply[1]


def test_anything_the_student_raises_comes_back_by_name_keyboard_interrupt_included():
    def stops():
        raise KeyboardInterrupt("stopped by the student")

    assert reply_to({"stops": stops}, "stops") == (
        "raised",
        "KeyboardInterrupt",
        "KeyboardInterrupt",
        "stopped by the student",
    )


def test_an_error_message_that_cannot_be_read_crosses_empty_and_a_long_one_cut():
    class Unreadable(ValueError):
        def __str__(self):
            raise RuntimeError("no words")

    def unreadable():
        raise Unreadable()

    def long():
        raise ValueError("x" * (3 * crossing.TEXT_LIMIT))

    assert reply_to({"f": unreadable}, "f") == ("raised", "Unreadable", "ValueError", "")
    assert reply_to({"f": long}, "f") == ("raised", "ValueError", "ValueError", "x" * crossing.TEXT_LIMIT)


def test_a_warning_inside_the_students_call_never_becomes_an_error():
    def warns():
        warnings.warn("a note of the student's", UserWarning, stacklevel=1)
        return 7

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reply_to({"warns": warns}, "warns") == ("returned", 7)


def _mailbox(folder):
    """The files and FIFOs of a kernel's mailbox, as the grader makes them: (request, reply, bell, answered)."""
    paths = [folder / name for name in ("request", "reply", "bell", "answered")]
    paths[1].touch()
    for fifo in paths[2:]:
        os.mkfifo(fifo)
    return paths


@pytest.fixture
def fresh_kernel_class(monkeypatch):
    """IPythonKernel as the zygote imported it, with a start that does nothing; no answering function yet."""
    monkeypatch.setattr(IPythonKernel, "start", lambda kernel: None)
    monkeypatch.delattr(builtins, "__kit_answer__", raising=False)


def test_install_answers_a_request_from_the_mailbox_into_the_reply(tmp_path, fresh_kernel_class):
    request, reply, *fifos = _mailbox(tmp_path)
    install(*map(str, (request, reply, *fifos)))
    grader = Mirror("grader", call=None)
    request.write_bytes(crossing.call_message(grader, torch.add, (torch.ones(2), torch.ones(2)), {}))
    builtins.__kit_answer__()
    kind, value = crossing.checked_reply(grader.incoming(reply.read_bytes()))
    assert kind == "returned" and value.tolist() == [2.0, 2.0]


def _rung_once(bell, answered) -> bytes:
    """Start a kernel on a fresh event loop, ring its bell once, and return what it said through `answered`."""
    grader_bell = os.open(bell, os.O_WRONLY | os.O_NONBLOCK)
    grader_answered = os.open(answered, os.O_RDONLY | os.O_NONBLOCK)

    async def ring() -> bytes:
        IPythonKernel.start(None)  # the kernel's start: it now listens on this loop
        heard = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().add_reader(grader_answered, lambda: heard.set_result(os.read(grader_answered, 64)))
        os.write(grader_bell, b"\x01")
        return await asyncio.wait_for(heard, 10)

    try:
        return asyncio.run(ring())
    finally:
        os.close(grader_bell)
        os.close(grader_answered)


def test_the_kernels_event_loop_answers_each_ring_and_says_so(tmp_path, fresh_kernel_class):
    request, reply, bell, answered = _mailbox(tmp_path)
    install(*map(str, (request, reply, bell, answered)))
    grader = Mirror("grader", call=None)
    request.write_bytes(crossing.call_message(grader, torch.mul, (torch.ones(2), 3.0), {}))
    assert _rung_once(bell, answered) == ANSWERED
    kind, value = crossing.checked_reply(grader.incoming(reply.read_bytes()))
    assert kind == "returned" and value.tolist() == [3.0, 3.0]


def test_an_interrupt_stops_the_answer_and_only_the_answer(tmp_path, fresh_kernel_class, monkeypatch):
    """While it answers, SIGINT raises KeyboardInterrupt, as in any handler of the kernel's; before and after, it is ignored."""
    *paths, bell, answered = _mailbox(tmp_path)
    install(*map(str, (*paths, bell, answered)))
    handlers = []

    def interrupted():
        handlers.append(signal.getsignal(signal.SIGINT))
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(builtins, "__kit_answer__", interrupted)  # as a student's replacement would be looked up
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel's own setting between handlers
    try:
        assert _rung_once(bell, answered) == FAILED
        assert handlers == [signal.default_int_handler]
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, ignored)


def test_interrupts_landing_anywhere_around_an_answer_still_end_it_with_its_word_and_sigint_ignored_again(monkeypatch):
    """However close to an answer's start or end an interrupt lands (a thread sends them all the while)."""
    bell, answered = os.pipe(), os.pipe()
    os.set_blocking(answered[0], False)
    monkeypatch.setattr(builtins, "__kit_answer__", lambda: sum(range(50)), raising=False)
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
    sending = threading.Event()
    sending.set()

    def interrupt_all_the_while():
        while sending.is_set():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(random.random() * 2e-4)

    interrupter = threading.Thread(target=interrupt_all_the_while)
    interrupter.start()
    unsaid = armed = 0
    try:
        for _ in range(50_000):
            os.write(bell[1], b"\x01")
            answer_ring(bell[0], answered[1])  # never raises
            try:
                os.read(answered[0], 64)
            except BlockingIOError:
                unsaid += 1
            armed += signal.getsignal(signal.SIGINT) != signal.SIG_IGN
    finally:
        sending.clear()
        interrupter.join()
        signal.signal(signal.SIGINT, ignored)
        for descriptor in (*bell, *answered):
            os.close(descriptor)
    assert (unsaid, armed) == (0, 0)


def test_install_refuses_a_reply_that_is_a_link(tmp_path, fresh_kernel_class):
    request, reply, *fifos = _mailbox(tmp_path)
    (tmp_path / "elsewhere").touch()
    reply.unlink()
    reply.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        install(*map(str, (request, reply, *fifos)))
    assert not hasattr(builtins, "__kit_answer__")
