"""The student's kernel answering the grader's calls, when grading is sealed.

Loaded by path for every graded kernel before any cell runs: the kernels' warm parent
runs it once and each kernel it forks calls `install` (kernel_zygote.py).
`install` puts one function, `__kit_answer__`, among the builtins, and has the kernel's
event loop listen on the mailbox's bell. The grader writes a request into the kernel's
mailbox and rings the bell (one byte through a FIFO); the kernel calls `__kit_answer__`,
which reads the request, calls what it names (an answer, a method of an object it holds,
or a function of the course's public module) and writes its reply into the one file of
the mailbox it may write, then says so through the mailbox's second FIFO ("answered").
No Jupyter message is sent either way: a shell message cost both processes about two
milliseconds of CPU per call (a hop through the kernel's shell thread, signing, parsing,
flushing), a FIFO some microseconds. Every descriptor is opened here, before any student
code runs; the mailbox itself is read-only to the kernel (kernel_box.py), so the kernel
can change what the reply says, never what the grader opens. Both messages are made by
`crossing.py`. The student can replace any of this; that only changes what their own
answers report, which the grader then judges like any other answer.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import runpy
import signal
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from gradekit.sandbox.crossing import Mirror

CROSSING_FILE = "crossing.py"
ANSWERED, FAILED = b"o", b"e"  # what the kernel writes into the answered FIFO: `__kit_answer__` returned, or raised
BELL_READ_BYTES = 4096  # rings since the last answer are read at once: one answer serves them all

# The wire, loaded with this file: where the zygote loads it once, every kernel starts with it compiled.
_CROSSING: dict[str, Any] = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), CROSSING_FILE))


def install(request_path: str, reply_path: str, bell_path: str, answered_path: str) -> None:
    crossing = _CROSSING
    state: dict[str, Mirror] = {}

    def user_namespace() -> dict[str, Any]:
        from IPython import get_ipython

        return get_ipython().user_ns

    def resolve_answer(name: str) -> object:
        namespace = user_namespace()
        if name not in namespace:
            raise NameError(f"name {name!r} is not defined")
        return namespace[name]

    def mirror() -> Mirror:
        if "mirror" not in state:
            # The requests are the grader's (the mailbox is read-only here): read with pickle's fast reader.
            # Whatever a student could make this read, their code can already do in this kernel.
            state["mirror"] = crossing["Mirror"]("kernel", resolve_answer=resolve_answer, trusts_messages=True)
        return state["mirror"]

    reply_handle = os.open(reply_path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    # Both FIFOs are held open for reading and writing: neither end ever sees the other gone
    # (a bell whose writer closed would read as ready forever), and neither open waits for a partner.
    fifo_flags = os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    bell, answered = os.open(bell_path, fifo_flags), os.open(answered_path, fifo_flags)

    def answer() -> None:
        with open(request_path, "rb") as request:
            data = request.read()
        reply = memoryview(respond(mirror(), data, crossing))
        written = 0  # into the file the grader emptied before asking
        while written < len(reply):
            written += os.pwrite(reply_handle, reply[written:], written)

    builtins.__kit_answer__ = answer  # type: ignore[attr-defined]  # the kit's own builtin, made here
    _answer_when_rung(bell, answered)


def _answer_when_rung(bell: int, answered: int) -> None:
    """Every kernel made after this answers each ring of `bell` on its event loop, calling `__kit_answer__` as it stands.

    The kernel's class is taught before the kernel exists (the zygote imported
    it), and before the guard takes its snapshot of that class. The name is
    looked up at each ring, so a student who replaces the function is judged
    on what the replacement writes, as when a cell called it.
    """
    from ipykernel.ipkernel import IPythonKernel
    from tornado.ioloop import IOLoop

    start = IPythonKernel.start

    def start_and_listen(kernel: IPythonKernel) -> None:
        start(kernel)
        IOLoop.current().add_handler(bell, lambda *_: answer_ring(bell, answered), IOLoop.READ)

    IPythonKernel.start = start_and_listen  # type: ignore[method-assign]


def answer_ring(bell: int, answered: int) -> None:
    """Answer what rang `bell` and say so through `answered`, whenever the grader's interrupt lands.

    `__kit_answer__` runs as a message handler of the kernel's would: an interrupt
    (SIGINT) stops it. Between handlers the kernel ignores SIGINT, so one sent
    late is dropped; one that landed during the answer but is raised just after
    it (Python raises a pending signal at its next check) is caught while the
    handler is put back, and the call ends with its word all the same, never with
    an error in the kernel's event loop.
    """
    try:
        if not os.read(bell, BELL_READ_BYTES):
            return
    except OSError:  # no ring after all: another read took it
        return
    between = signal.getsignal(signal.SIGINT)
    said = FAILED
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        builtins.__kit_answer__()  # type: ignore[attr-defined]  # made by install(), or the student's
        said = ANSWERED
    except BaseException:  # KeyboardInterrupt included: the grader always hears back, then reads the reply
        pass
    finally:
        while True:  # putting SIG_IGN back drops a pending interrupt; one raised before that is caught here
            try:
                signal.signal(signal.SIGINT, between)
                break
            except KeyboardInterrupt:
                continue
    with contextlib.suppress(OSError):  # a full FIFO: the grader's clock decides
        os.write(answered, said)


def respond(mirror: Mirror, data: bytes, crossing: dict[str, Any]) -> bytes:
    """Run the request in `data`; the reply says what came back or what was raised.

    A context a test opened around the student's code (a dispatch mode, saved
    tensor hooks) stays open between calls; it wraps the student's call only,
    never the reading and writing of messages.
    """
    try:
        with _outside_test_contexts():
            target, args, kwargs = mirror.incoming(data)
    except BaseException as error:  # a fault of the grader's request, not of the student
        return _reply(mirror, ("failed", f"{type(error).__name__}: {error}"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = target(*args, **dict(kwargs))
    except BaseException as error:  # the student's code may raise anything, KeyboardInterrupt included
        return _raised(mirror, error, crossing)
    try:
        return _reply(mirror, ("returned", result))
    except crossing["ValueCannotCross"] as refusal:  # a value the wire does not carry: the test says so
        return _reply(mirror, crossing["refusal_reply"](refusal))
    except BaseException as error:
        return _reply(mirror, ("failed", f"the result could not be sent: {type(error).__name__}: {error}"))


def _reply(mirror: Mirror, value: object) -> bytes:
    with _outside_test_contexts():
        return mirror.outgoing(lambda encoder: encoder.encode(value))


def _outside_test_contexts() -> AbstractContextManager[object]:
    """Dispatch modes the test opened are set aside while messages are read and written.

    (Saved-tensor hooks need no such care: reading and writing builds no graph.)
    """
    from torch.utils._python_dispatch import _disable_current_modes

    return _disable_current_modes()


def _raised(mirror: Mirror, error: BaseException, crossing: dict[str, Any]) -> bytes:
    limit = crossing["TEXT_LIMIT"]
    try:
        message = str(error)[:limit]
    except Exception:  # a student's __str__ may raise too
        message = ""
    builtin = crossing["_builtin_exception"](error)
    return _reply(mirror, ("raised", type(error).__name__[:80], builtin, message))
