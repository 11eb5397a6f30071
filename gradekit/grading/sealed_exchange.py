"""The sealed exchange: how a call of a test cell running in the grader reaches the student's kernel and comes back.

A sealed test cell runs in a thread of the grading worker (sealed_checks.py).
Each call of a student's function is a request the grader writes into the
kernel's mailbox (kernel_folders.py), a ring of the mailbox's bell that wakes
the kernel's answering function (answer_server.py), a word back through the
mailbox's "answered" FIFO, and a reply the grader reads. The mailbox is the
grader's: the request, the bell and the answered FIFO go through descriptors
held since the first call, so a kernel that swaps a path only misleads itself;
the reply is read only as a regular file of bounded size, never through a
link. Whatever the kernel writes into its FIFOs can only cut its own answers
short: the grader reads them without ever waiting on them, forgets what they
held before each call, and a kernel that never answers is held to the cell's
clock as before.

Waiting for the answer belongs to the step that keeps the kernel
(safe_execute.py, seen here as `KernelKeeper`): it holds the cell to its time
limit and interrupts or kills a kernel that will not answer. What is left
here is the grader's own side of a call: a call that makes no progress at all
for the watchdog's time (STALLED) and a mailbox gone from under the kernel
(TEMP_FILE_MISSING) are the grader's failures, noticed on the run's sink as
well as raised, since a test cell may catch what is raised through it.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Protocol

from gradekit.core.bounded_files import RefusedFile, read_bounded
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading.kernel_folders import KernelFolder
from gradekit.grading.phase_clock import Phase
from gradekit.grading.run_sink import RunSink
from gradekit.grading.sealed_checks import KernelStopped
from gradekit.sandbox.crossing import MAX_MESSAGE_BYTES, CrossingError

ANSWERED, FAILED = b"o", b"e"  # answer_server.py's words: its answering function returned, or raised
RING = b"\x01"
FIFO_READ_BYTES = 65536  # a FIFO's whole buffer
STALE_READS = 16  # what a kernel left in its answered FIFO is read away at most this many times a call
MAX_REPLY_BYTES = MAX_MESSAGE_BYTES + 2**20  # the archive's entries, plus its headers and directory
NOT_STARTED = "the call was not started"


class GraderStop(KernelStopped):
    """Carries the grader's failure out of a sealed test cell.

    A KernelStopped, so that no `except Exception` in the test can swallow it
    (the sealed namespace lets it through); it leaves the cell as the GraderFailure it carries.
    """

    def __init__(self, failure: GraderFailure):
        super().__init__(str(failure))
        self.failure = failure


class Listening(Protocol):
    """How the keeper hears that the kernel answered: "ok" or "error" within `seconds`, or None."""

    async def __call__(self, seconds: float) -> str | None: ...


class KernelKeeper(Protocol):
    """What the exchange asks of the step that keeps the kernel alive and on time."""

    def refuse_if_killed(self) -> None:
        """Raise KernelStopped, with the same reason, once the grader has killed the kernel."""

    async def await_answer(self, answered: Listening) -> None:
        """Wait until `answered` hears the kernel within the running test cell's time limit."""

    def watchdog_seconds(self) -> float:
        """How long one call to the kernel may make no progress at all."""
        ...


class Mailbox:
    """The kernel's mailbox as the grader uses it: it writes the request and reads the reply, both files it made."""

    def __init__(self, folder: KernelFolder):
        self.folder = folder
        # Held open from the first call (see `post`): the request file, the bell, and the answered FIFO.
        self._request: int | None = None
        self._bell: int | None = None
        self._answered: int | None = None
        self._silent = False  # nothing more will be heard: a FIFO's other end is gone
        self._word: str | None = None  # what the kernel said of this call, once read and until it is taken

    def post(self, request: bytes) -> None:
        """Empty the reply, forget what the kernel said before, then write `request` into the file the grader made."""
        _empty(self.folder.reply)  # an answering function that writes nothing must not leave the last reply standing
        if self._answered is None:
            self._answered = _open_fifo(self.folder.answered, os.O_RDONLY)
        self._silent = False
        self._forget_what_was_said()
        self._word = None
        self._write_request(request)

    def ring(self) -> None:
        """Tell the kernel a request waits: one byte through its bell.

        A bell nobody reads (the kernel died, or closed its end) leaves the call to the keeper's
        schedule, which finds a dead kernel, or holds a live one to the cell's clock.
        """
        try:
            if self._bell is None:
                self._bell = _open_fifo(self.folder.bell, os.O_WRONLY)
            os.write(self._bell, RING)
        except BlockingIOError:  # the bell is full of rings the kernel has not read: it is rung already
            pass
        except OSError:  # no reader: ENXIO when opening, EPIPE when writing
            self._silent = True

    async def answered(self, seconds: float) -> str | None:
        """The kernel's word once it says it answered within `seconds` ("ok" or "error"); None when it said nothing.

        A word is kept on the mailbox as soon as it is read, never only in a waiter: one read just
        as a wait timed out is there for the next wait (a word read and dropped once left a kernel
        idle and a grader waiting until the clock killed it).
        """
        descriptor = self._answered
        if descriptor is None or self._silent:
            await asyncio.sleep(seconds)  # the keeper's schedule goes on: it finds a dead kernel, or the clock ends it
            return self._taken()
        self._listen()
        if self._word is None and not self._silent:
            loop = asyncio.get_running_loop()
            heard: asyncio.Future[None] = loop.create_future()

            def readable() -> None:
                self._listen()
                if self._word is not None or self._silent:  # an ended FIFO reads as ready forever
                    loop.remove_reader(descriptor)
                    if not heard.done():
                        heard.set_result(None)

            loop.add_reader(descriptor, readable)
            try:
                await asyncio.wait_for(heard, seconds)
            except TimeoutError:
                pass
            finally:
                loop.remove_reader(descriptor)
        return self._taken()

    def _listen(self) -> None:
        said = self._said()
        if said is not None:
            self._word = said

    def _taken(self) -> str | None:
        word, self._word = self._word, None
        return word

    def _said(self) -> str | None:
        """What the kernel wrote into the answered FIFO since the grader last read it, if anything."""
        try:
            words = os.read(self._answered, FIFO_READ_BYTES) if self._answered is not None else b""
        except BlockingIOError:
            return None
        if not words:  # no writer is left: the kernel ended, or closed its end
            self._silent = True
            return None
        return "ok" if words.endswith(ANSWERED) else "error"

    def _forget_what_was_said(self) -> None:
        """Read away what the kernel wrote before this call, a bounded number of times (it may keep writing)."""
        for _ in range(STALE_READS):
            if self._said() is None:
                return

    def reply(self) -> bytes:
        """The kernel's reply: a regular file of bounded size, never a link to somewhere else."""
        try:
            data = read_bounded(self.folder.reply, MAX_REPLY_BYTES)
        except RefusedFile:
            raise CrossingError("the kernel's answer is not a plain file of bounded size") from None
        except OSError:
            data = b""
        if not data:  # the grader emptied the reply before asking
            raise CrossingError(
                "the kernel gave no answer (its answering function failed or was replaced, "
                "or something in the kernel said it had answered before it had)"
            )
        return data

    def close(self) -> None:
        for descriptor in (self._request, self._bell, self._answered):
            if descriptor is not None:
                os.close(descriptor)
        self._request = self._bell = self._answered = None

    def _write_request(self, data: bytes) -> None:
        """Write through a descriptor held since the first call: the grader's own file, whatever is later at its path."""
        if self._request is None:
            flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            self._request = os.open(self.folder.request, flags)
            if not stat.S_ISREG(os.fstat(self._request).st_mode):
                raise CrossingError("the kernel's mailbox holds something other than the request file the grader made")
        written = 0
        while written < len(data):
            written += os.pwrite(self._request, data[written:], written)
        # Cut the last request's tail only now: truncating a freshly written file to nothing first
        # costs a forced write-out on some file systems (ext4's allocation on truncate), a millisecond a call.
        os.ftruncate(self._request, len(data))


class SealedExchange:
    """One notebook's channel from the grader's test cells to its kernel, made once the kernel's folder is known.

    Built on the event loop's thread; `call` is what the test cells' thread uses.
    """

    def __init__(self, mailbox: Mailbox, keeper: KernelKeeper, sink: RunSink, notebook: str):
        self.mailbox = mailbox
        self._keeper = keeper
        self._sink = sink
        self._notebook = notebook
        self._loop = asyncio.get_running_loop()
        self._stage = NOT_STARTED  # how far the current call got, for the watchdog's message

    def call(self, request: bytes) -> bytes:
        """Hand `request` to the kernel and return its reply; run in the test cells' thread."""
        with self._sink.clock.phase(
            Phase.SEALED_WIRE
        ):  # entered first: the kernel's own share is taken out in `answer`
            return self._call(request)

    def _call(self, request: bytes) -> bytes:
        self._stage = NOT_STARTED
        future = asyncio.run_coroutine_threadsafe(self.answer(request), self._loop)
        watchdog = self._keeper.watchdog_seconds()
        try:
            return future.result(timeout=watchdog)
        except TimeoutError:  # bounded as the cell is, and more: nothing moved on either side
            future.cancel()
            stalled = f"{self._notebook}: no progress in {watchdog:g} s ({self._stage})"
            raise GraderStop(self._sink.notice(GraderFailure(GraderCause.STALLED, stalled))) from None
        except GraderFailure as failure:  # noticed here: a test cell may catch what it raises through
            raise self._sink.notice(failure)
        except (OSError, CrossingError) as error:
            folder = self.mailbox.folder.path
            if not folder.is_dir():
                missing = GraderFailure(GraderCause.TEMP_FILE_MISSING, f"{folder} is gone")
                raise self._sink.notice(missing) from error
            raise

    async def answer(self, request: bytes) -> bytes:
        """Write the request, ask the kernel to answer, wait as its keeper says, and read the reply (on the loop)."""
        self._keeper.refuse_if_killed()  # a test's clean-up calling again after the kill: the same reason
        self._stage = "the request was being written"
        self.mailbox.post(request)
        self.mailbox.ring()
        self._stage = "the kernel was asked to answer"
        with self._sink.clock.phase(Phase.SEALED_KERNEL):
            await self._keeper.await_answer(self.mailbox.answered)
        self._stage = "the reply was being read"
        return self.mailbox.reply()


def _open_fifo(path: os.PathLike[str], access: int) -> int:
    """One end of a FIFO of the mailbox, never waiting and never through a link; refused if it is no FIFO."""
    descriptor = os.open(path, access | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    if not stat.S_ISFIFO(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise CrossingError("the kernel's mailbox holds something other than the FIFO the grader made")
    return descriptor


def _empty(path: os.PathLike[str]) -> None:
    """Truncate a file of the kernel's mailbox; the grader made it, and opens nothing else there."""
    handle = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK)
    os.close(handle)
