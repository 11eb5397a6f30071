"""nbgrader's Execute step, hardened for untrusted notebooks.

On top of the warm, forked kernels (warm_kernels.py):
* a kernel that dies in a cell (os._exit, a segfault, the memory cap) or
  ignores the interrupt after a timeout no longer fails the whole submission:
  that cell and every code cell after it get an error output saying why, so
  nbgrader scores them zero and grades the rest of the notebook;
* after every graded cell the grader asks the kernel's guard (kernel_guard.py)
  whether anything the checks rely on was replaced; the guard's refusals and
  answers, and any question left unanswered, become findings.

* no output may repeat a line of the course's hidden tests (however the
  answer got hold of it): such lines are cut (hidden_lines.py) and the cut is
  a finding; the guard's log is read as guard_log.py says;
* every output is held to the course's byte budget as it arrives, of every
  MIME type (output_limits.py), so the grader never keeps a flood of images.

Each notebook's outcome is reported to the run's sink (`sink`, run_sink.py),
which the scratch grader reads and clears per submission; the hidden lines and
the trusted sources come as the step's traits, set by the scratch grader.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import secrets
import signal
import stat
import time
from pathlib import Path
from queue import Empty

from nbclient.client import timestamp
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import NotebookNode
from traitlets import Dict, Instance, Set, Unicode

from gradekit.core.bounded_files import RefusedFile, read_bounded
from gradekit.core.cell_ids import grade_id
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.notes import Finding, FindingKind, Note, NoteKind
from gradekit.grading.cpu_clock import POLL_SECONDS, CellClock, Verdict
from gradekit.grading.guard_log import file_identity, read_log
from gradekit.grading.hidden_lines import cut_hidden_lines, hidden_test_lines
from gradekit.grading.kernel_cgroups import KernelGroup, TreeEvents
from gradekit.grading.kernel_folders import KernelFolder
from gradekit.grading.output_limits import CUT_BY_THE_GRADER, LimitOutputSize, output_bytes
from gradekit.grading.run_sink import NotebookReport
from gradekit.grading.sealed_checks import CellOutOfTime, KernelStopped, SealedNotebook
from gradekit.grading.warm_kernels import WarmExecute, killed_from_outside
from gradekit.sandbox.crossing import MAX_MESSAGE_BYTES, CrossingError
from gradekit.sandbox.kernel_guard import ARM_EVENT, PROBE_EVENT

ANSWER_REQUEST = "kit_answer_request"  # the message answer_server.py teaches the kernel
PROBE_SECONDS = 10
KERNEL_DIED = "the kernel died while this cell ran (os._exit, a crash in C code, or the memory cap)"
OUT_OF_MEMORY = "the kernel ran out of memory while this cell ran"
INTERRUPT_GRACE_SECONDS = 5
# The per-call watchdog: four times the cell's limit (its wall-clock backstop is three) and some slack.
WATCHDOG_FACTOR, WATCHDOG_SLACK, DEFAULT_CELL_SECONDS = 4, 30, 60
MAX_REPLY_BYTES = MAX_MESSAGE_BYTES + 2**20  # the archive's entries, plus its headers and directory


class _GraderStop(KernelStopped):
    """Carries the grader's failure out of a sealed test cell.

    A KernelStopped, so that no `except Exception` in the test can swallow it
    (the sealed namespace lets it through); it leaves the cell as the GraderFailure it carries.
    """

    def __init__(self, failure: GraderFailure):
        super().__init__(str(failure))
        self.failure = failure


# Findings that say nothing of tampering with the kernel's side of the wire.
UNTAMPERED = frozenset({FindingKind.UNREADABLE_ANSWER, FindingKind.HIDDEN_CODE_SHOWN})


@dataclasses.dataclass
class _LogReading:
    """What the guard's log shows as a whole, gathered record by record."""

    tampered: str = ""  # why the log is not the guard's own, or ""
    armed: bool = False
    answered: set[str] = dataclasses.field(default_factory=set)  # probes the guard answered
    refusals_logged: int = 0
    refusals_counted: int = 0  # as the guard's last probe counted them


class SafeExecute(WarmExecute):
    hidden_lines = Set(
        Unicode(),
        help="Lines of the course's hidden tests that must never show up in an output (each notebook's own are added).",
    ).tag(config=True)
    sealed_sources = Dict(
        value_trait=Instance(NotebookNode),
        help="Sealed grading: notebook name -> its trusted source, whose test cells run in the grader, not the kernel.",
    ).tag(config=True)
    sealed_helpers = Dict(
        value_trait=Instance(Path),
        help="Sealed grading: the course's helper modules beside the notebooks, by module name -> their file.",
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km=None) -> tuple[NotebookNode, dict]:
        self._notebook = (resources or {}).get("unique_key", "notebook")
        self._stopped: str | None = None
        self._notes: list[Note] = []
        self._probes: dict[str, str] = {}  # nonce -> the graded cell it followed
        self._guard_log: str | None = None  # kept here: nbclient drops the kernel manager at the end
        self._folder: KernelFolder | None = None  # a guarded kernel's folder: its mailbox and guard log
        self._log_identity: tuple[int, int] | None = None  # (device, inode) of the log, before any student code
        self._hidden = set(self.hidden_lines) | hidden_test_lines(nb)
        self._noticed: list[Finding] = []  # what this process saw itself: cut leaks, unreadable replies
        self._sealed: SealedNotebook | None = None
        self._running = "a cell"  # the test cell whose calls the kernel is answering
        self._stage = "the call was not started"  # how far the current call to the kernel got (for the watchdog)
        self._clock: CellClock | None = None  # that cell's use of the kernel, against its limit
        self._source = self.sealed_sources.get(self._notebook)
        self._request: int | None = None  # the request file the grader made, held open (see _write_request)
        self._killed_because: str | None = None  # why the grader killed the kernel in a call, if it did
        self._outputs = LimitOutputSize(config=self.config).budget()  # the course's byte budget, as they arrive
        self._cgroup: KernelGroup | None = None  # the kernel's memory and pids group (kernel_cgroups.py), if any
        self._tree_seen = TreeEvents()  # its counters when last looked at
        try:
            return super().preprocess(nb, resources, km)
        finally:
            if self._request is not None:
                os.close(self._request)
            self.sink.report(NotebookReport(self._notebook, self._findings(), tuple(self._notes)))
            if self._folder:
                self._folder.remove()

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell.cell_type != "code":
            return cell
        if self._stopped:
            _fail(cell, "NotRun", f"not run: {self._stopped}")
            return cell
        if self._guard_log is None:
            self._guard_log = getattr(self.km.provisioner, "guard_log", None) or ""
            provisioner = self.km.provisioner
            self._folder = provisioner.folder if getattr(provisioner, "guarded", False) else None
            self._cgroup = getattr(provisioner, "cgroup", None)
            if self._guard_log:
                self._log_identity = file_identity(Path(self._guard_log))
                await self._tell_guard(ARM_EVENT, "")
        sealed = self._sealed_notebook()
        role = sealed.role(cell) if sealed else "kernel"
        if role == "test":
            self.code_cells_executed += 1  # counted as nbclient counts the cells it sends
            cell.execution_count = execution_count or self.code_cells_executed
            await self._run_sealed_test(cell, sealed)
            return cell
        try:
            await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            if role == "readonly":
                problem = await asyncio.to_thread(sealed.run_readonly, cell)
                if problem:
                    self._notes.append(Note(NoteKind.NOT_RUN, self._notebook, problem, (_cell_name(cell),)))
        except KernelStopped as stop:
            self._stop(cell, str(stop))
            return cell
        except DeadKernelError:
            self._stop(cell, self._why_it_died())
            return cell
        except CellTimeoutError:
            self._kill_kernel()
            self._stop(cell, self._past_limit("ignored the interrupt"))
            return cell
        if any(output.get("ename") == "CellTimeoutError" for output in cell.outputs):
            self._note_interrupted(_cell_name(cell))
        await self._after(cell)
        return cell

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's output, then held to the notebook's byte budget before the grader keeps it."""
        out = super().output(outs, msg, display_id, cell_index)
        if out is None or not outs or outs[-1] is not out:
            return out
        outs.pop()
        self._outputs.admit(outs, out)
        if outs and outs[-1] is out:
            return out
        if display_id:  # what nbclient recorded for an output that was not kept as it came
            self._display_id_map.get(display_id, {}).get(cell_index, [None]).pop()
        return None

    def handle_comm_msg(self, outs, msg, cell_index):
        """Comms are left alone: grading plays no widget's front end.

        nbclient would keep a widget's state whole (in memory and in the notebook's
        metadata), route an Output widget's outputs past the budget, and fail the
        notebook on a widget message it cannot read.
        """

    def _update_display_id(self, display_id, msg):
        """An update replaces an output's data: it is held to the same budget first."""
        content = msg.get("content", {})
        size = output_bytes(content)
        if not self._outputs.take(size):
            note = f"[an updated output of {size:,} bytes {CUT_BY_THE_GRADER}: past the output budget]"
            msg["content"] = {**content, "data": {"text/plain": note}, "metadata": {}}
        super()._update_display_id(display_id, msg)

    async def _after(self, cell) -> None:
        """Cut hidden-test lines from what the cell shows; after a graded cell, probe the guard."""
        if cut_hidden_lines(cell, self._hidden):
            self._noticed.append(self._finding(FindingKind.HIDDEN_CODE_SHOWN, "", _cell_name(cell)))
        hit = self._tree_limit_hit()
        if hit is not None:
            self._notes.append(Note(hit, self._notebook, self._tree_limit(hit), (_cell_name(cell),)))
        if _graded(cell) and self._guard_log:
            await self._probe(cell)

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        """nbclient's wait for a cell's reply, with the limit judged on the kernel's CPU time.

        The cell is the student's timeout when the kernel used more CPU seconds
        than the limit, or sat past the wall-clock backstop on a machine that let
        it run; then nbclient interrupts it as it always did. A cell held back by
        an overloaded machine is the grader's failure, raised for a retry.
        """
        clock = self._new_clock(timeout)
        if clock is None:  # no limit, or no kernel process to measure: nbclient's own wall clock
            return await super()._async_poll_for_reply(
                msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive
            )
        clock.resume()
        while True:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=POLL_SECONDS))
            except Empty:
                try:
                    verdict = self._judge(clock)
                except GraderFailure:
                    task_poll_kernel_alive.cancel()
                    raise
                if verdict is Verdict.RUNNING:
                    continue
                task_poll_kernel_alive.cancel()
                await self._async_check_alive()
                msg = await self._async_handle_timeout(timeout, cell)  # interrupts; nbgrader's error reply
                if msg is None:  # configured to wait for the kernel's own reply to the interrupt
                    return await super()._async_poll_for_reply(
                        msg_id, cell, INTERRUPT_GRACE_SECONDS, task_poll_output_msg, task_poll_kernel_alive
                    )
                msg["parent_header"] = {"msg_id": msg_id}
            if msg["parent_header"].get("msg_id") == msg_id:
                return await self._settle(msg, cell, task_poll_output_msg, task_poll_kernel_alive)

    async def _settle(self, msg, cell, task_poll_output_msg, task_poll_kernel_alive):
        """What nbclient does with a cell's reply: wait for the cell's last output, then return the reply."""
        if self.record_timing:
            cell["metadata"]["execution"]["shell.execute_reply"] = timestamp(msg)
        try:
            await asyncio.wait_for(task_poll_output_msg, self.iopub_timeout)
        except (asyncio.TimeoutError, Empty):
            if self.raise_on_iopub_timeout:  # the kernel ignored the interrupt
                task_poll_kernel_alive.cancel()
                raise CellTimeoutError.error_from_timeout_and_cell(
                    "Timeout waiting for IOPub output", self.iopub_timeout, cell
                ) from None
            self.log.warning("Timeout waiting for IOPub output")
        task_poll_kernel_alive.cancel()
        return msg

    def _watchdog_seconds(self) -> float:
        """How long one call to the kernel may make no progress: past the cell's wall-clock backstop and grace."""
        return WATCHDOG_FACTOR * float(self.timeout or DEFAULT_CELL_SECONDS) + INTERRUPT_GRACE_SECONDS + WATCHDOG_SLACK

    def _new_clock(self, limit) -> CellClock | None:
        pid = getattr(self.km.provisioner, "pid", None)
        return CellClock(pid, limit) if limit and pid else None

    def _judge(self, clock: CellClock) -> Verdict:
        """The clock's verdict; an overloaded machine is the grader's failure, raised here."""
        verdict = clock.verdict()
        if verdict is Verdict.OVERLOADED:
            # Noticed as well as raised: on its way out nbgrader turns it into a failed run.
            raise self.sink.notice(GraderFailure(GraderCause.OVERLOADED, f"{self._notebook}: {clock.describe()}"))
        return verdict

    def _past_limit(self, what: str) -> str:
        return f"this cell ran past the {self.timeout} s limit and {what}"

    def _note_interrupted(self, name: str) -> None:
        self._notes.append(Note(NoteKind.INTERRUPTED, self._notebook, str(self.timeout), (name,)))

    def _sealed_notebook(self) -> SealedNotebook | None:
        """The grading side of this notebook, once its kernel can answer (sealed grading only)."""
        if self._sealed is None and self._source is not None and self._folder:
            loop = asyncio.get_running_loop()

            def exchange(request: bytes) -> bytes:
                self._stage = "the call was not started"
                future = asyncio.run_coroutine_threadsafe(self._exchange(request), loop)
                try:
                    return future.result(timeout=self._watchdog_seconds())
                except TimeoutError:  # bounded as the cell is, and more: nothing moved on either side
                    future.cancel()
                    stalled = f"{self._notebook}: no progress in {self._watchdog_seconds():g} s ({self._stage})"
                    raise _GraderStop(self.sink.notice(GraderFailure(GraderCause.STALLED, stalled))) from None
                except GraderFailure as failure:  # noticed here: a test cell may catch what it raises through
                    raise self.sink.notice(failure)
                except (OSError, CrossingError) as error:
                    if self._folder and not self._folder.path.is_dir():
                        missing = GraderFailure(GraderCause.TEMP_FILE_MISSING, f"{self._folder.path} is gone")
                        raise self.sink.notice(missing) from error
                    raise

            self._sealed = SealedNotebook(self._source, dict(self.sealed_helpers), exchange)
        return self._sealed

    async def _run_sealed_test(self, cell, sealed: SealedNotebook) -> None:
        self._running = _cell_name(cell)
        # One time limit for the whole test cell, as when it runs in the kernel, however many calls it makes.
        self._clock = self._new_clock(self.timeout)
        # Reading the kernel's replies happens here, in the grader: it stops at the cell's own limit too.
        sealed.mirror.deadline = time.monotonic() + self.timeout if self.timeout else None
        try:
            outputs = await asyncio.to_thread(sealed.run_test, cell)
        except _GraderStop as overloaded:
            raise overloaded.failure from None
        except KernelStopped as stop:
            self._stop(cell, str(stop))
            return
        cell.outputs = outputs
        for broken in dict.fromkeys(sealed.broken_replies):
            self._noticed.append(self._finding(FindingKind.UNREADABLE_ANSWER, str(broken), _cell_name(cell)))
        sealed.broken_replies.clear()
        for refused in dict.fromkeys(sealed.mirror.refused):
            self._noticed.append(self._finding(FindingKind.TEST_TENSOR_CHANGED, refused, _cell_name(cell)))
        sealed.mirror.refused.clear()
        sealed.mirror.refusals.clear()
        for forged in dict.fromkeys(sealed.forgeries):
            self._noticed.append(self._finding(FindingKind.FORGED_FACT, forged, _cell_name(cell)))
        sealed.forgeries.clear()
        await self._after(cell)

    async def _exchange(self, request: bytes) -> bytes:
        """Hand `request` to the kernel's answering function and return its reply."""
        # Sealed grading starts only once the kernel's private folder is known (see _sealed_notebook).
        assert self._folder is not None
        if self._killed_because:  # a test's clean-up calling again after the kill: the same reason, not a death
            raise KernelStopped(self._killed_because)
        folder = self._folder
        self._stage = "the request was being written"
        _empty(folder.reply)  # an answering function that writes nothing must not leave the last reply standing
        self._write_request(folder.request, request)
        msg_id = self._ask_for_answer()
        self._stage = "the kernel was asked to answer"
        self._clock = self._clock or self._new_clock(self.timeout)
        try:
            status = await self._await_reply(msg_id, self._clock)
        except GraderFailure as failure:
            raise _GraderStop(failure) from None
        if status is None:
            await ensure_async(self.km.interrupt_kernel())
            status = await self._await_reply(msg_id, INTERRUPT_GRACE_SECONDS)
            if status is None:
                self._kill_kernel()
                self._killed_because = self._past_limit("ignored the interrupt")
                raise KernelStopped(self._killed_because)
            self._note_interrupted(self._running)
            raise CellOutOfTime(self._past_limit("was interrupted"))
        self._stage = "the reply was being read"
        return _read_reply(folder.reply)

    def _write_request(self, path: Path, data: bytes) -> None:
        """Write the request into the file the grader made, through a descriptor held since the first call.

        The descriptor names the grader's own file whatever the kernel later puts
        at its path (an unconfined kernel could): the grader never writes
        elsewhere, and a kernel that swaps the path only misleads itself.
        """
        if self._request is None:
            self._request = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            if not stat.S_ISREG(os.fstat(self._request).st_mode):
                raise CrossingError("the kernel's mailbox holds something other than the request file the grader made")
        os.ftruncate(self._request, 0)
        written = 0
        while written < len(data):
            written += os.pwrite(self._request, data[written:], written)

    def _ask_for_answer(self) -> str:
        """Send the kernel's answering message (answer_server.py); its id."""
        message = self.kc.session.msg(ANSWER_REQUEST, {})
        self.kc.shell_channel.send(message)
        return message["header"]["msg_id"]

    async def _await_reply(self, msg_id: str, limit: CellClock | float | None):
        """The status of the shell reply to `msg_id`, or None once `limit` is up; a dead kernel stops the notebook.

        `limit` is the test cell's clock (judged on the kernel's CPU time, see
        cpu_clock.py), a plain number of wall seconds, or None for no limit.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit if isinstance(limit, (int, float)) else None
        clock = limit if isinstance(limit, CellClock) else None
        if clock:
            clock.resume()
        try:
            while deadline is None or loop.time() < deadline:
                wait = POLL_SECONDS if deadline is None else min(deadline - loop.time(), POLL_SECONDS)
                try:
                    reply = await ensure_async(self.kc.shell_channel.get_msg(timeout=max(wait, 0.0)))
                except Empty:
                    if not await ensure_async(self.km.is_alive()):
                        raise KernelStopped(self._why_it_died())
                    if clock and self._judge(clock) is not Verdict.RUNNING:
                        return None
                    continue
                if reply["parent_header"].get("msg_id") == msg_id:
                    return reply["content"].get("status", "error")
            return None
        finally:
            if clock:
                clock.pause()

    # nbclient binds its synchronous wrapper to its own coroutine function; rebind it to ours.
    execute_cell = run_sync(async_execute_cell)

    def _stop(self, cell, why: str) -> None:
        name = _cell_name(cell)
        _fail(cell, "KernelStopped", why)
        self._stopped = f"an earlier cell ({name}) stopped the kernel"
        self._notes.append(Note(NoteKind.KERNEL_STOPPED, self._notebook, why, (name,)))

    def _tree_limit_hit(self) -> NoteKind | None:
        """What the kernel's tree ran into since the last look (its cgroup's counters), if anything."""
        if self._cgroup is None:
            return None
        seen, self._tree_seen = self._tree_seen, self._cgroup.events()
        if self._tree_seen.out_of_memory > seen.out_of_memory:
            return NoteKind.OUT_OF_MEMORY
        if self._tree_seen.too_many_tasks > seen.too_many_tasks:
            return NoteKind.TOO_MANY_PROCESSES
        return None

    def _tree_limit(self, kind: NoteKind) -> str:
        assert self._cgroup is not None  # asked only after its counters rose
        if kind is NoteKind.OUT_OF_MEMORY:
            return f"{self._cgroup.memory_bytes / 2**30:g} GiB"
        return str(self._cgroup.tasks)

    def _why_it_died(self) -> str:
        """Why the kernel died in this cell: the student's memory, when its cgroup OOM-killed it; else as before."""
        hit = self._tree_limit_hit()
        if hit is NoteKind.OUT_OF_MEMORY:  # a SIGKILL from the kernel's own limit: the student's, never retried
            return f"{OUT_OF_MEMORY}: its processes held more than {self._tree_limit(hit)}"
        self._notice_killed()
        return KERNEL_DIED

    def _notice_killed(self) -> None:
        """A kernel that died of SIGKILL was most likely killed from outside: noticed, so the notebook is retried."""
        process = getattr(self.km.provisioner, "process", None)
        if process is not None and process.poll() is not None and killed_from_outside(process):
            self.sink.notice(GraderFailure(GraderCause.KERNEL_KILLED, f"{self._notebook}: kernel {process.pid}"))

    def _kill_kernel(self) -> None:
        pid = getattr(self.km.provisioner, "pid", None)
        if pid:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    async def _probe(self, cell) -> None:
        """Ask the guard to check the watched objects; an unanswered question is a finding."""
        nonce = secrets.token_hex(8)
        self._probes[nonce] = _cell_name(cell)
        await self._tell_guard(PROBE_EVENT, nonce)

    async def _tell_guard(self, event: str, argument: str) -> None:
        """Raise `event` in the kernel, outside any cell, and wait (briefly) until it has run."""
        code = f"__import__('sys').audit({event!r}, {argument!r})"
        msg_id = await ensure_async(self.kc.execute(code, silent=True, store_history=False))
        deadline = asyncio.get_running_loop().time() + PROBE_SECONDS
        while (remaining := deadline - asyncio.get_running_loop().time()) > 0:
            try:
                reply = await ensure_async(self.kc.shell_channel.get_msg(timeout=remaining))
            except Empty:
                break
            if reply["parent_header"].get("msg_id") == msg_id:
                return

    def _finding(self, kind: FindingKind, detail: str = "", *items: str) -> Finding:
        return Finding(kind, self._notebook, detail, items)

    def _findings(self) -> tuple[Finding, ...]:
        """What the guard's log says, once per finding, in the order first seen."""
        findings: dict[Finding, None] = dict.fromkeys(self._noticed)
        if not self._guard_log:
            return tuple(findings)
        log = Path(self._guard_log)
        records, tampered = read_log(log, self._log_identity)
        reading = _LogReading(tampered=tampered)
        for record in records:
            self._read_record(record, reading, findings)
        self._judge_log(reading, findings)
        log.unlink(missing_ok=True)
        self._notice_unreadable_replies(tuple(findings))
        return tuple(findings)

    def _read_record(self, record: dict, reading: _LogReading, findings: dict[Finding, None]) -> None:
        """One record of the guard's log: what it adds to the findings and to what the log shows overall."""
        if ("armed" in record or "probe" in record) and not self._written_to_our_log(record):
            reading.tampered = reading.tampered or "holds an answer that names another file"
        if "armed" in record:
            reading.armed = True
        elif "refused" in record:
            reading.refusals_logged += 1
            findings[self._finding(FindingKind.ANSWER_REFUSED, str(record.get("reason")), str(record["refused"]))] = (
                None
            )
        elif "probe" in record:
            reading.answered.add(record["probe"])
            reading.refusals_counted = max(reading.refusals_counted, int(record.get("refusals", 0)))
            after = self._probes.get(record["probe"], "a cell")
            for seen in record.get("findings", []):
                if not any(f.kind is FindingKind.GUARD_SAW and f.detail == str(seen) for f in findings):
                    findings[self._finding(FindingKind.GUARD_SAW, str(seen), after)] = None
        else:
            findings[self._finding(FindingKind.FOREIGN_LOG_LINE)] = None

    def _judge_log(self, reading: _LogReading, findings: dict[Finding, None]) -> None:
        """What the whole log shows: tampering, a guard never armed, lost records, probes left unanswered."""
        if reading.tampered:
            findings[self._finding(FindingKind.LOG_TAMPERED, reading.tampered)] = None
        if not reading.armed and self._probes and not reading.tampered:
            # The guard is armed before any student code runs: unless its log shows a stranger's hand, that is ours.
            if any(f.kind is FindingKind.FOREIGN_LOG_LINE for f in findings):
                findings[self._finding(FindingKind.GUARD_NEVER_ARMED)] = None
            else:
                self.sink.notice(GraderFailure(GraderCause.GUARD_NOT_ARMED, self._notebook))
        if reading.refusals_counted > reading.refusals_logged:
            findings[self._finding(FindingKind.LOG_LOST_RECORDS)] = None
        if not self._stopped:
            for nonce, cell in self._probes.items():
                if nonce not in reading.answered:
                    findings[self._finding(FindingKind.PROBE_UNANSWERED, "", cell)] = None

    def _written_to_our_log(self, record: dict) -> bool:
        """True when the guard's record names the log the grader made as the file it was written to."""
        return self._log_identity is None or record.get("log") == list(self._log_identity)

    def _notice_unreadable_replies(self, findings: tuple[Finding, ...]) -> None:
        """An unreadable reply from a live kernel the guard saw nothing wrong in is ours (tried again); else the student's."""
        unreadable = [f for f in findings if f.kind is FindingKind.UNREADABLE_ANSWER]
        if unreadable and not self._stopped and all(f.kind in UNTAMPERED for f in findings):
            self.sink.notice(GraderFailure(GraderCause.REPLY_UNREADABLE, unreadable[0].text))


def _empty(path: Path) -> None:
    """Truncate a file of the kernel's mailbox; the grader made it, and opens nothing else there."""
    handle = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK)
    os.close(handle)


def _read_reply(path: Path) -> bytes:
    """The kernel's reply: a regular file of bounded size, never a link to somewhere else."""
    try:
        data = read_bounded(path, MAX_REPLY_BYTES)
    except RefusedFile:
        raise CrossingError("the kernel's answer is not a plain file of bounded size") from None
    except OSError:
        data = b""
    if not data:  # the grader emptied the reply before asking
        raise CrossingError("the kernel gave no answer (its answering function failed, or was removed or replaced)")
    return data


def _graded(cell) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("grade"))


def _cell_name(cell) -> str:
    return grade_id(cell) or f"cell {cell.get('id', '?')}"


def _fail(cell, ename: str, why: str) -> None:
    cell.outputs.append(NotebookNode(output_type="error", ename=ename, evalue=why, traceback=[f"{ename}: {why}"]))
