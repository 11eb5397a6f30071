"""nbgrader's Execute step, hardened for untrusted notebooks: it keeps the kernel, and hands the rest on.

On top of the warm, forked kernels (warm_kernels.py), this step survives what
a student's kernel can do to a notebook's run:
* a kernel that dies in a cell (os._exit, a segfault, the memory cap) or
  ignores the interrupt after a timeout no longer fails the whole submission:
  that cell and every code cell after it get an error output saying why, so
  nbgrader scores them zero and grades the rest of the notebook;
* a cell's time limit is judged on the kernel's CPU time (cpu_clock.py): a
  machine too loaded to let the kernel run is the grader's failure, retried;
  a kernel sleeping after its submission's idle allowance was spent
  (idle_allowance.py) is interrupted as a cell past its limit is;
* every output is held to the course's byte budget as it arrives, of every
  MIME type (output_limits.py), so the grader never keeps a flood of images.

What it hands on:
* sealed grading: test cells run in the grader (sealed_checks.py) and their
  calls cross through the kernel's mailbox (sealed_exchange.py); this step
  waits for each answer within the cell's limit (`await_answer`);
* after every graded cell it probes the kernel's guard (kernel_guard.py);
  the guard's log and what the grader noticed itself are judged when the
  notebook ends (notebook_findings.py);
* no output may repeat a line of the course's hidden tests (however the
  answer got hold of it): such lines are cut (hidden_lines.py) and the cut is
  a finding.

Each notebook's outcome is reported to the run's sink (`sink`, run_sink.py),
which the scratch grader reads and clears per submission; the hidden lines and
the trusted sources come as the step's traits, set by the scratch grader.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from queue import Empty
from typing import Any

from nbclient.client import timestamp
from nbclient.exceptions import CellExecutionComplete, CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import NotebookNode
from traitlets import Dict, Instance, Set, Unicode

from gradekit.core.cell_ids import grade_id
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.notes import FindingKind, Note, NoteKind
from gradekit.grading.cpu_clock import CellClock, ReadingSchedule, Usage, Verdict, group_usage, kernel_usage
from gradekit.grading.hidden_lines import cut_hidden_lines, hidden_test_lines
from gradekit.grading.kernel_cgroups import KernelGroup, TreeEvents
from gradekit.grading.kernel_folders import KernelFolder
from gradekit.grading.notebook_findings import NotebookFindings
from gradekit.grading.output_limits import CUT_BY_THE_GRADER, LimitOutputSize, output_bytes
from gradekit.grading.phase_clock import Phase
from gradekit.grading.run_sink import NotebookReport
from gradekit.grading.sealed_checks import CellOutOfTime, KernelStopped, SealedNotebook
from gradekit.grading.sealed_exchange import GraderStop, Listening, Mailbox, SealedExchange
from gradekit.grading.trailing_output import await_trailing_output
from gradekit.grading.warm_kernels import WarmExecute, killed_from_outside
from gradekit.sandbox.kernel_guard import ARM_EVENT, PROBE_EVENT

PROBE_SECONDS = 10
KERNEL_DIED = "the kernel died while this cell ran (os._exit, a crash in C code, or the memory cap)"
OUT_OF_MEMORY = "the kernel ran out of memory while this cell ran"
INTERRUPT_GRACE_SECONDS = 5
# The per-call watchdog: four times the cell's limit (its wall-clock backstop is three) and some slack.
WATCHDOG_FACTOR, WATCHDOG_SLACK, DEFAULT_CELL_SECONDS = 4, 30, 60


class SafeExecute(WarmExecute):
    """nbgrader's Execute step that survives kernel death and timeouts, and keeps the kernel for the sealed exchange."""

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
    _ended_by: Verdict | None = None  # why the last cell's clock ended it, if it did
    _silent_seconds = 0.0  # how long the grader has waited for the kernel's messages with none ready
    _silent_since: float | None = None  # when the present such wait began

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km: Any = None) -> tuple[NotebookNode, dict]:
        self._notebook = (resources or {}).get("unique_key", "notebook")
        self._stopped: str | None = None
        self._notes: list[Note] = []
        self._guard_log: str | None = None  # kept here: nbclient drops the kernel manager at the end
        self._folder: KernelFolder | None = None  # a guarded kernel's folder: its mailbox and guard log
        self._hidden = set(self.hidden_lines) | hidden_test_lines(nb)
        self._findings = NotebookFindings(self._notebook, self.sink)  # what this run shows of tampering
        self._sealed: SealedNotebook | None = None
        self._running = "a cell"  # the test cell whose calls the kernel is answering
        self._clock: CellClock | None = None  # that cell's use of the kernel, against its limit
        self._ended_by = None
        self._source = self.sealed_sources.get(self._notebook)
        self._exchange: SealedExchange | None = None  # the test cells' channel to the kernel, once it can answer
        self._killed_because: str | None = None  # why the grader killed the kernel in a call, if it did
        self._outputs = LimitOutputSize(config=self.config).budget()  # the course's byte budget, as they arrive
        self._cgroup: KernelGroup | None = None  # the kernel's memory and pids group (kernel_cgroups.py), if any
        self._tree_seen = TreeEvents()  # its counters when last looked at
        try:
            with self.sink.clock.phase(Phase.EXECUTE):
                return super().preprocess(nb, resources, km)
        finally:
            if self._exchange is not None:
                self._exchange.mailbox.close()
            findings = self._findings.judged(stopped=bool(self._stopped))
            self.sink.report(NotebookReport(self._notebook, findings, tuple(self._notes)))
            if self._folder:
                self._folder.remove()

    async def async_execute_cell(
        self, cell: NotebookNode, cell_index: int, execution_count: int | None = None, store_history: bool = True
    ) -> NotebookNode:
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
                self._findings.watch_log(Path(self._guard_log))
                await self._tell_guard(ARM_EVENT, "")
        sealed = self._sealed_notebook()
        role = sealed.role(cell) if sealed else "kernel"
        if sealed and role == "test":
            self.code_cells_executed += 1  # counted as nbclient counts the cells it sends
            cell.execution_count = execution_count or self.code_cells_executed
            with self.sink.clock.phase(Phase.TEST_CELLS):
                await self._run_sealed_test(cell, sealed)
            return cell
        try:
            with self.sink.clock.phase(Phase.ANSWER_CELLS):
                await self._run_in_kernel(cell, cell_index, execution_count, store_history, sealed, role)
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

    async def _run_in_kernel(
        self,
        cell: NotebookNode,
        cell_index: int,
        execution_count: int | None,
        store_history: bool,
        sealed: SealedNotebook | None,
        role: str,
    ) -> None:
        """nbclient's run of a cell in the kernel; a read-only cell of a sealed notebook is checked after it."""
        await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        if sealed and role == "readonly":
            problem = await asyncio.to_thread(sealed.run_readonly, cell)
            if problem:
                self._notes.append(Note(NoteKind.NOT_RUN, self._notebook, problem, (_cell_name(cell),)))

    async def _async_poll_output_msg(self, parent_msg_id: str, cell: NotebookNode, cell_index: int) -> None:
        """nbclient's reading of a cell's messages, timing the waits with none ready: the kernel's silence."""
        assert self.kc is not None  # set up by nbclient before any cell runs
        channel = self.kc.iopub_channel
        while True:
            if not await ensure_async(channel.msg_ready()):
                self._silent_since = time.monotonic()
                try:
                    await channel.socket.poll()
                finally:
                    self._silent_seconds += time.monotonic() - self._silent_since
                    self._silent_since = None
            msg = await ensure_async(channel.get_msg(timeout=None))
            if msg["parent_header"].get("msg_id") == parent_msg_id:
                try:
                    self.process_message(msg, cell, cell_index)
                except CellExecutionComplete:
                    return

    def _kernel_silence_from_now(self) -> Callable[[], float]:
        """The seconds the grader waits from now on for the kernel's messages with none ready, read on demand."""
        start = self._silence_so_far()
        return lambda: self._silence_so_far() - start

    def _silence_so_far(self) -> float:
        waiting = time.monotonic() - self._silent_since if self._silent_since is not None else 0.0
        return self._silent_seconds + waiting

    def _kernel_cpu_from_now(self) -> Callable[[], float]:
        """The kernel's CPU seconds from now on, read on demand (0 where its process cannot be read)."""
        pid = getattr(self.km.provisioner, "pid", None)
        if not pid:
            return lambda: 0.0
        usage = self._usage()
        start = usage(pid).cpu
        return lambda: usage(pid).cpu - start

    def output(
        self, outs: list[NotebookNode], msg: dict[str, Any], display_id: str | None, cell_index: int
    ) -> NotebookNode | None:
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

    def handle_comm_msg(self, outs: list[NotebookNode], msg: dict[str, Any], cell_index: int) -> None:
        """Comms are left alone: grading plays no widget's front end.

        nbclient would keep a widget's state whole (in memory and in the notebook's
        metadata), route an Output widget's outputs past the budget, and fail the
        notebook on a widget message it cannot read.
        """

    def _update_display_id(self, display_id: str, msg: dict[str, Any]) -> None:
        """An update replaces the data of every output shown under its id: it is held to the budget once for each."""
        content = msg.get("content", {})
        size = output_bytes(content)
        shown = sum(len(indices) for indices in self._display_id_map.get(display_id, {}).values())
        if not self._outputs.take(size, copies=max(shown, 1)):
            note = f"[an updated output of {size:,} bytes {CUT_BY_THE_GRADER}: past the output budget]"
            msg["content"] = {**content, "data": {"text/plain": note}, "metadata": {}}
        super()._update_display_id(display_id, msg)

    async def _after(self, cell: NotebookNode) -> None:
        """Cut hidden-test lines from what the cell shows; after a graded cell, probe the guard."""
        if cut_hidden_lines(cell, self._hidden):
            self._findings.notice(FindingKind.HIDDEN_CODE_SHOWN, "", _cell_name(cell))
        hit = self._tree_limit_hit()
        if hit is not None:
            self._notes.append(Note(hit, self._notebook, self._tree_limit(hit), (_cell_name(cell),)))
        if _graded(cell) and self._guard_log:
            await self._probe(cell)

    async def _async_poll_for_reply(
        self,
        msg_id: str,
        cell: NotebookNode,
        timeout: int | None,
        task_poll_output_msg: asyncio.Future[Any],
        task_poll_kernel_alive: asyncio.Future[Any],
    ) -> dict[str, Any]:
        """nbclient's wait for a cell's reply, with the limit judged on the kernel's CPU time.

        The cell is the student's timeout when the kernel used more CPU seconds
        than the limit, or sat past the wall-clock backstop on a machine that let
        it run; then nbclient interrupts it as it always did. A cell held back by
        an overloaded machine is the grader's failure, raised for a retry. The
        clock is read on its own schedule, whatever the kernel sends meanwhile:
        a flood of messages that answer nothing never keeps it from being read.
        """
        clock = self._new_clock(timeout)
        if clock is None:  # no limit, or no kernel process to measure: nbclient's own wall clock
            return await super()._async_poll_for_reply(
                msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive
            )
        clock.resume()
        while True:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=clock.schedule.wait()))
            except Empty:
                msg = None
            if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
                return await self._settle(msg, cell, task_poll_output_msg, task_poll_kernel_alive)
            if clock.schedule.due():
                try:
                    verdict = self._judge(clock)
                except GraderFailure:
                    task_poll_kernel_alive.cancel()
                    raise
                if verdict is Verdict.RUNNING:
                    continue
                self._ended_by = verdict
                task_poll_kernel_alive.cancel()
                await self._async_check_alive()
                msg = await self._async_handle_timeout(timeout, cell)  # interrupts; nbgrader's error reply
                if msg is None:  # configured to wait for the kernel's own reply to the interrupt
                    return await super()._async_poll_for_reply(
                        msg_id, cell, INTERRUPT_GRACE_SECONDS, task_poll_output_msg, task_poll_kernel_alive
                    )
                msg["parent_header"] = {"msg_id": msg_id}
                return await self._settle(msg, cell, task_poll_output_msg, task_poll_kernel_alive)

    async def _settle(
        self,
        msg: dict[str, Any],
        cell: NotebookNode,
        task_poll_output_msg: asyncio.Future[Any],
        task_poll_kernel_alive: asyncio.Future[Any],
    ) -> dict[str, Any]:
        """What nbclient does with a cell's reply: wait for the cell's last output, then return the reply.

        The grader's reading of the outputs costs the kernel nothing (trailing_output.py): a slow grader
        is not a kernel that ignored its interrupt.
        """
        if self.record_timing:
            cell["metadata"]["execution"]["shell.execute_reply"] = timestamp(msg)
        silence, cpu = self._kernel_silence_from_now(), self._kernel_cpu_from_now()
        try:
            quiet, at_most = self.iopub_timeout, self.watchdog_seconds()
            await await_trailing_output(task_poll_output_msg, quiet, at_most, silence, cpu)
        except (asyncio.TimeoutError, Empty):
            if self.raise_on_iopub_timeout:  # the kernel ignored the interrupt
                task_poll_kernel_alive.cancel()
                raise CellTimeoutError.error_from_timeout_and_cell(
                    "Timeout waiting for IOPub output", self.iopub_timeout, cell
                ) from None
            self.log.warning("Timeout waiting for IOPub output")
        task_poll_kernel_alive.cancel()
        return msg

    def watchdog_seconds(self) -> float:
        """How long one call to the kernel may make no progress: past the cell's wall-clock backstop and grace."""
        return WATCHDOG_FACTOR * float(self.timeout or DEFAULT_CELL_SECONDS) + INTERRUPT_GRACE_SECONDS + WATCHDOG_SLACK

    def _new_clock(self, limit: int | None) -> CellClock | None:
        pid = getattr(self.km.provisioner, "pid", None)
        self._ended_by = None
        if not (limit and pid):
            return None
        return CellClock(pid, limit, self._usage(), allowance=self.sink.idle)

    def _usage(self) -> Callable[[int], Usage]:
        """How the kernel's use of the machine is read: its cgroup's processes where it has one, else its tree."""
        return group_usage(self._cgroup.processes) if self._cgroup is not None else kernel_usage

    def _judge(self, clock: CellClock) -> Verdict:
        """The clock's verdict; an overloaded machine is the grader's failure, raised here."""
        verdict = clock.verdict()
        if verdict is Verdict.OVERLOADED:
            # Noticed as well as raised: on its way out nbgrader turns it into a failed run.
            raise self.sink.notice(GraderFailure(GraderCause.OVERLOADED, f"{self._notebook}: {clock.describe()}"))
        return verdict

    def _past_limit(self, what: str) -> str:
        if self._ended_by is Verdict.IDLE_SPENT and self.sink.idle is not None:
            return f"this cell sat sleeping or blocked after the submission's {self.sink.idle.seconds:g} s of idle time were spent, and {what}"
        return f"this cell ran past the {self.timeout} s limit and {what}"

    def _note_interrupted(self, name: str) -> None:
        if self._ended_by is Verdict.IDLE_SPENT and self.sink.idle is not None:
            note = Note(NoteKind.IDLE_SPENT, self._notebook, f"{self.sink.idle.seconds:g}", (name,))
        else:
            note = Note(NoteKind.INTERRUPTED, self._notebook, str(self.timeout), (name,))
        self._notes.append(note)

    def _sealed_notebook(self) -> SealedNotebook | None:
        """The grading side of this notebook, once its kernel can answer (sealed grading only)."""
        if self._sealed is None and self._source is not None and self._folder:
            self._exchange = SealedExchange(Mailbox(self._folder), self, self.sink, self._notebook)
            self._sealed = SealedNotebook(self._source, dict(self.sealed_helpers), self._exchange.call)
        return self._sealed

    async def _run_sealed_test(self, cell: NotebookNode, sealed: SealedNotebook) -> None:
        self._running = _cell_name(cell)
        # One time limit for the whole test cell, as when it runs in the kernel, however many calls it makes.
        self._clock = self._new_clock(self.timeout)
        # Reading the kernel's replies happens here, in the grader: it stops at the cell's own limit too.
        sealed.mirror.deadline = time.monotonic() + self.timeout if self.timeout else None
        try:
            outputs = await asyncio.to_thread(sealed.run_test, cell)
        except GraderStop as overloaded:
            raise overloaded.failure from None
        except KernelStopped as stop:
            self._stop(cell, str(stop))
            return
        cell.outputs = outputs
        for broken in dict.fromkeys(sealed.broken_replies):
            self._findings.notice(FindingKind.UNREADABLE_ANSWER, str(broken), _cell_name(cell))
        sealed.broken_replies.clear()
        for refused in dict.fromkeys(sealed.mirror.refused):
            self._findings.notice(FindingKind.TEST_TENSOR_CHANGED, refused, _cell_name(cell))
        sealed.mirror.refused.clear()
        sealed.mirror.refusals.clear()
        for forged in dict.fromkeys(sealed.forgeries):
            self._findings.notice(FindingKind.FORGED_FACT, forged, _cell_name(cell))
        sealed.forgeries.clear()
        await self._after(cell)

    def refuse_if_killed(self) -> None:
        """A test's clean-up calling again after the grader killed the kernel gets the same reason, not a death."""
        if self._killed_because:
            raise KernelStopped(self._killed_because)

    async def await_answer(self, answered: Listening) -> None:
        """Wait until `answered` hears the kernel within the test cell's limit, interrupting it (or killing it) past that."""
        self._clock = self._clock or self._new_clock(self.timeout)
        try:
            status = await self._await_reply(answered, self._clock)
        except GraderFailure as failure:
            raise GraderStop(failure) from None
        if status is None:
            await ensure_async(self.km.interrupt_kernel())
            status = await self._await_reply(answered, INTERRUPT_GRACE_SECONDS)
            if status is None:
                self._kill_kernel()
                self._killed_because = self._past_limit("ignored the interrupt")
                raise KernelStopped(self._killed_because)
            self._note_interrupted(self._running)
            raise CellOutOfTime(self._past_limit("was interrupted"))

    async def _await_reply(self, answered: Listening, limit: CellClock | float | None) -> str | None:
        """What `answered` heard ("ok" or "error"), or None once `limit` is up; a dead kernel stops the notebook.

        `limit` is the test cell's clock (judged on the kernel's CPU time, see
        cpu_clock.py), a plain number of wall seconds, or None for no limit.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit if isinstance(limit, (int, float)) else None
        clock = limit if isinstance(limit, CellClock) else None
        if clock:
            clock.resume()
        # Judged on its own schedule, whatever the kernel says; a test cell's clock keeps one across calls.
        schedule = clock.schedule if clock else ReadingSchedule()
        try:
            while deadline is None or loop.time() < deadline:
                wait = schedule.wait() if deadline is None else min(deadline - loop.time(), schedule.wait())
                status = await answered(max(wait, 0.0))
                if status is not None:
                    return status
                if not schedule.due():
                    continue
                if not await ensure_async(self.km.is_alive()):
                    raise KernelStopped(self._why_it_died())
                if clock and (verdict := self._judge(clock)) is not Verdict.RUNNING:
                    self._ended_by = verdict
                    return None
            return None
        finally:
            if clock:
                clock.pause()

    # nbclient binds its synchronous wrapper to its own coroutine function; rebind it to ours.
    execute_cell = run_sync(async_execute_cell)

    def _stop(self, cell: NotebookNode, why: str) -> None:
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

    async def _probe(self, cell: NotebookNode) -> None:
        """Ask the guard to check the watched objects; an unanswered question is a finding."""
        await self._tell_guard(PROBE_EVENT, self._findings.new_probe(_cell_name(cell)))

    async def _tell_guard(self, event: str, argument: str) -> None:
        """Raise `event` in the kernel, outside any cell, and wait (briefly) until it has run."""
        with self.sink.clock.phase(Phase.GUARD):
            await self._ask_guard(event, argument)

    async def _ask_guard(self, event: str, argument: str) -> None:
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


def _graded(cell: NotebookNode) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("grade"))


def _cell_name(cell: NotebookNode) -> str:
    return grade_id(cell) or f"cell {cell.get('id', '?')}"


def _fail(cell: NotebookNode, ename: str, why: str) -> None:
    cell.outputs.append(NotebookNode(output_type="error", ename=ename, evalue=why, traceback=[f"{ename}: {why}"]))
