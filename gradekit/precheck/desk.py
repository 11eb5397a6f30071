"""The pre-check's front desk: takes a student's request, or says why not, queues it fairly and hands back results.

Plain Python without HTTP, so that every rule is tested directly: a request
names a notebook of the assignment, comes from the student it claims, is
fresh and sent once, finds the pre-check open, the student with nothing else
in flight, and the notebook out of its cooldown and within its daily quota.
A student reads only their own checks: another's id is answered exactly as an
id that never existed.

Every refusal that needs no notebook is judged before the uploaded notebook is
looked at, so a flood of refused requests costs next to nothing. What must
survive a restart (the limits, the nonces still inside the request window and
each student's results) is written to the state folder as it changes and read
back at start; a check that was waiting or running when the service stopped
is answered as not run and given back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path

from gradekit.core.due_words import due_line
from gradekit.core.extensions import Extension, due_for
from gradekit.core.settings import PrecheckSettings
from gradekit.core.status import ReplyStatus
from gradekit.grading.submission_grader import GradedSubmission
from gradekit.precheck.audit import AuditLog
from gradekit.precheck.fair_queue import FairQueue
from gradekit.precheck.limits import RateLimiter
from gradekit.precheck.nonces import NonceBook
from gradekit.precheck.refusals import Reason, Refusal
from gradekit.precheck.reply import (
    grader_error_reply,
    leaked_lines,
    not_run_reply,
    secret_lines,
    student_reply,
    unbuilt_reply,
    withheld_reply,
)
from gradekit.precheck.state import StateFolder, student_file

log = logging.getLogger(__name__)

# (student, notebook name without .ipynb, the notebook's JSON as bytes) -> its grading on the sealed engine
Grade = Callable[[str, str, bytes], Awaitable[GradedSubmission]]
KEPT_PER_STUDENT = 20  # results a student can still read back; older ones are dropped
ECHO_LIMIT = 100  # characters of a refused name said back to the student
MAX_NOTEBOOK_BYTES = 4 * 2**20  # as the service takes at most (its body limit)
QUEUED, RUNNING, DONE = "queued", "running", "done"
KEPT_FOLDER = "kept"  # below the service's state folder: what a restart must not forget
LIMITS_FILE = "limits"
SAVE_AFTER_SECONDS = 1.0  # nonces of refused requests are written at most this often (a flood is one write)


@dataclasses.dataclass
class Check:
    id: str
    student: str
    notebook: str
    taken_at: float
    content: bytes = dataclasses.field(repr=False, default=b"")
    state: str = QUEUED
    reply: dict | None = None
    finished: asyncio.Event = dataclasses.field(default_factory=asyncio.Event, repr=False)

    def as_json(self, position: int | None = None) -> dict:
        body: dict = {"id": self.id, "notebook": f"{self.notebook}.ipynb", "state": self.state}
        if position is not None and self.state == QUEUED:
            body["position"] = position
        if self.reply is not None:
            body["result"] = self.reply
        return body

    def saved(self) -> dict:
        return {
            "id": self.id,
            "notebook": self.notebook,
            "taken_at": self.taken_at,
            "state": self.state,
            "reply": self.reply,
        }


class Desk:
    def __init__(
        self,
        settings: PrecheckSettings,
        assignment_id: str,
        source_notebooks: dict,
        grade: Grade,
        audit: AuditLog,
        clock: Callable[[], float] = time.time,
        state_dir: Path | None = None,
        extensions: Callable[[], dict[str, Extension]] = dict,
    ):
        self.settings = settings
        self.assignment_id = assignment_id
        self.sources = source_notebooks  # notebook name -> trusted source notebook (points and hidden tests)
        self.secrets = {name: secret_lines(notebook) for name, notebook in source_notebooks.items()}
        self.grade = grade
        self.audit = audit
        self.clock = clock
        self.extensions = extensions  # read on every question: a TA's `gradekit extend` counts at once
        self.limits = RateLimiter(settings.cooldown_seconds, settings.daily_quota, clock)
        self.nonces = NonceBook(settings.request_window_seconds, clock)
        self.queue: FairQueue[Check] = FairQueue()
        self.checks: dict[str, OrderedDict[str, Check]] = {}  # student -> their checks by id, oldest first
        self.in_flight: dict[str, Check] = {}  # student -> their queued or running check
        self.running = 0
        self._tasks: set[asyncio.Task] = set()
        self.kept = StateFolder(Path(state_dir) / KEPT_FOLDER) if state_dir is not None else None
        self._save_pending: asyncio.TimerHandle | None = None
        self._restore()

    # The request ------------------------------------------------------------------------------

    def refusal_before_reading(self, student: str) -> Refusal | None:
        """Why `student`'s upload is refused whatever it holds (closed, or a check of theirs in flight), else None.

        Judged before the body is even parsed; audited like every refusal.
        """
        closed = self.closed_because(student)
        refusal = Refusal(Reason.CLOSED, closed) if closed else self._busy(student)
        if refusal is not None:
            self.audit.record(student, "(not read)", "refused", reason=refusal.reason.word)
        return refusal

    def submit(self, student: str, request: object) -> Check | Refusal:
        """Take `student`'s request (the JSON body, parsed) or say why not; every outcome is audited."""
        notebook = _notebook_name(request.get("notebook")) if isinstance(request, dict) else None
        accepted_nonces = self.nonces.accepted
        refusal = self._refusal(student, request, notebook)
        content: bytes | Refusal = refusal or b""
        if refusal is None and isinstance(request, dict):
            # Only now is the notebook looked at: every refusal that does not need it came first.
            content = _content(request.get("content"))
            refusal = content if isinstance(content, Refusal) else None
        if refusal is not None:
            # Only a name of the assignment is written: whatever else a request carries stays out of the log.
            audited = (
                notebook if notebook is not None and notebook in self.sources else "(not a notebook of the assignment)"
            )
            self.audit.record(student, audited, "refused", reason=refusal.reason.word)
            if self.nonces.accepted != accepted_nonces:
                self._save_soon()  # its nonce is used up, and must stay so across a restart
            return refusal
        assert isinstance(content, bytes) and notebook is not None
        now = self.clock()  # one reading: a refund finds the cooldown it started
        self.limits.take(student, notebook, now)
        check = Check(secrets.token_urlsafe(18), student, notebook, now, content)
        self._keep(check)
        self.in_flight[student] = check
        self.queue.put(student, check)
        try:
            self._save(check.student)  # counted and its nonce used up before the student hears of it
        except OSError:  # a full disk: the check still runs; only a restart before the next write would forget it
            log.exception("%s: the pre-check's state could not be saved", check.id)
        self.audit.record(student, notebook, "taken", check=check.id)
        self._dispatch()
        return check

    def _refusal(self, student: str, request: object, notebook: str | None) -> Refusal | None:
        """Every refusal that needs no look at the notebook itself, in the order the student should hear them."""
        if not isinstance(request, dict):
            return Refusal(Reason.BAD_REQUEST, "the request's body is not a JSON object")
        claimed = request.get("student", student)
        if claimed != student:
            return Refusal(
                Reason.FORGED,
                f"the request names the student {_shown(claimed)} but its token belongs to {student!r}: refused",
            )
        replayed = self.nonces.accept(request.get("nonce"), request.get("sent"))
        if replayed is not None:
            return replayed
        if notebook is None or notebook not in self.sources:
            names = ", ".join(f"{name}.ipynb" for name in sorted(self.sources))
            return Refusal(
                Reason.UNKNOWN_NOTEBOOK,
                f"{_shown(request.get('notebook'))} is not a notebook of the assignment {self.assignment_id} ({names})",
            )
        closed = self.closed_because(student)
        if closed:
            return Refusal(Reason.CLOSED, closed)
        return self._busy(student) or self._with_last_answer(self.limits.refusal(student, notebook), student, notebook)

    def _with_last_answer(self, refusal: Refusal | None, student: str, notebook: str) -> Refusal | None:
        """A cooldown or quota refusal, carrying `student`'s last finished answer for `notebook`."""
        if refusal is None:
            return None
        done = [c for c in self.checks.get(student, {}).values() if c.notebook == notebook and c.state == DONE]
        if not done:
            return refusal
        last = done[-1]
        return dataclasses.replace(refusal, last={"taken_at": last.taken_at, "result": last.reply})

    def _busy(self, student: str) -> Refusal | None:
        pending = self.in_flight.get(student)
        if pending is None:
            return None
        return Refusal(
            Reason.BUSY,
            f"your pre-check of {pending.notebook}.ipynb is still {pending.state}: one at a time, this one was not taken",
            5.0,
        )

    def deadline(self, student: str) -> datetime.datetime | None:
        """The student's own deadline: their extension, else the assignment's due date (None: no due date)."""
        return due_for(self.settings.due_date(self.assignment_id), self.extensions(), student)

    def due_words(self, student: str) -> str:
        """ "due Friday 18 December 2026, 23:00 UTC, in 2 days", or "" without a due date."""
        deadline = self.deadline(student)
        return due_line(deadline, self._now()) if deadline else ""

    def _now(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.clock(), datetime.timezone.utc)

    def closed_because(self, student: str = "") -> str | None:
        """Why the pre-check is closed now for `student` (switched off, or past their deadline), or None while open."""
        if not self.settings.enabled:
            return "the pre-check is switched off for this course"
        if self.assignment_id in self.settings.closed_assignments:
            return f"the pre-check of {self.assignment_id} is switched off by the course team"
        due = self.deadline(student)
        if due is not None and self._now() >= due:
            kind = "your extension" if student in self.extensions() else "its due date"
            return f"the pre-check of {self.assignment_id} closed at {kind}, {due.isoformat()}"
        return None

    def result(self, student: str, check_id: str) -> Check | Refusal:
        """`student`'s own check by its id; another student's id is answered as an unknown one."""
        check = self.checks[student].get(check_id) if student in self.checks else None
        if check is None:
            return Refusal(Reason.NOT_FOUND, f"no pre-check {check_id!r} of yours is known here")
        return check

    def position(self, check: Check) -> int:
        """How many waiting checks go before `check` in the round robin."""
        return self.queue.position(check.student, check)

    def standing(self, student: str) -> dict:
        """What `student` may do now, per notebook: checks left today and seconds of cooldown left."""
        closed = self.closed_because(student)
        notebooks = {}
        for name in sorted(self.sources):
            refusal = self.limits.refusal(student, name)
            notebooks[f"{name}.ipynb"] = {
                "left_today": self.limits.remaining_today(student, name),
                "wait_seconds": round(refusal.retry_after or 0, 1) if refusal else 0,
            }
        deadline = self.deadline(student)
        return {
            "student": student,
            "open": closed is None,
            "closed_because": closed or "",
            "due": deadline.isoformat() if deadline else "",
            "due_line": self.due_words(student),
            "notebooks": notebooks,
        }

    # The queue ------------------------------------------------------------------------------

    def _keep(self, check: Check) -> None:
        kept = self.checks.setdefault(check.student, OrderedDict())
        kept[check.id] = check
        while len(kept) > KEPT_PER_STUDENT:
            kept.popitem(last=False)

    def _dispatch(self) -> None:
        while self.running < self.settings.workers:
            taken = self.queue.take()
            if taken is None:
                return
            self.running += 1
            task = asyncio.get_running_loop().create_task(self._run(taken[1]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, check: Check) -> None:
        check.state = RUNNING
        reply = await self._reply(check)
        if reply["status"] == ReplyStatus.GRADER_ERROR and not self.limits.refund(
            check.student, check.notebook, check.taken_at
        ):
            reply = grader_error_reply(counted=True)  # the day's refunds are used: no endless free runs
        due = self.due_words(check.student)
        check.reply, check.state, check.content = ({**reply, "due": due} if due else reply), DONE, b""
        try:
            self._save(check.student)
        except OSError:  # a full disk must not keep the student in flight and the worker taken for good
            log.exception("%s: the pre-check's state could not be saved", check.id)
        try:
            self.audit.record(
                check.student,
                check.notebook,
                "graded",
                check=check.id,
                status=reply["status"],
                score=reply.get("score"),
                max_score=reply.get("max_score"),
            )
        except OSError:
            log.exception("%s: the audit log could not be written", check.id)
        finally:
            self.in_flight.pop(check.student, None)
            self.queue.done(check.student)
            self.running -= 1
            check.finished.set()
            self._dispatch()

    async def _reply(self, check: Check) -> dict:
        """The reply for `check`: a grader error only where the grader itself failed, never where the notebook did."""
        try:
            graded = await self.grade(check.student, check.notebook, check.content)
        except Exception:
            log.exception("%s: pre-check of %s failed", check.id, check.notebook)
            return grader_error_reply()
        hidden = self.secrets[check.notebook]
        try:
            reply = student_reply(check.notebook, graded, self.sources[check.notebook], hidden)
        except Exception:  # built from what the notebook's run left: the notebook's doing, so it counts
            log.exception("%s: the reply to %s could not be built", check.id, check.notebook)
            return unbuilt_reply()
        leaked = leaked_lines(reply, hidden)
        if leaked:  # never sent: the reply would show hidden test code; only the notebook's run can put it there
            log.error("%s: a reply repeated %d hidden test lines; withheld", check.id, len(leaked))
            return withheld_reply()
        return reply

    async def wait(self, check: Check, seconds: float) -> None:
        """Until `check` is done or `seconds` have passed."""
        try:
            await asyncio.wait_for(check.finished.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    # Kept across restarts ---------------------------------------------------------------------

    def _save(self, student: str | None = None) -> None:
        """Write the limits and nonces now, and `student`'s results if named."""
        if self.kept is None:
            return
        if self._save_pending is not None:
            self._save_pending.cancel()
            self._save_pending = None
        self.kept.write(LIMITS_FILE, {"limits": self.limits.snapshot(), "nonces": self.nonces.snapshot()})
        if student is not None:
            checks = [check.saved() for check in self.checks.get(student, {}).values()]
            self.kept.write(student_file(student), {"student": student, "checks": checks})

    def _save_soon(self) -> None:
        """Write the limits and nonces within a second: a flood of refused requests makes one write, not one each."""
        if self.kept is None or self._save_pending is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script driving the desk): now, then
            self._save_when_due()
            return
        self._save_pending = loop.call_later(SAVE_AFTER_SECONDS, self._save_when_due)

    def _save_when_due(self) -> None:
        self._save_pending = None
        try:
            self._save()
        except OSError:
            log.exception("the pre-check's limits and nonces could not be saved")

    def flush(self) -> None:
        """Write what is still waiting to be written (the service is stopping)."""
        if self._save_pending is not None:
            self._save_pending.cancel()
            self._save_when_due()

    def _restore(self) -> None:
        if self.kept is None:
            return
        saved = self.kept.read(LIMITS_FILE)
        if saved is not None:
            if isinstance(saved, dict):
                self.limits.restore(saved.get("limits"))
                self.nonces.restore(saved.get("nonces"))
            else:
                log.error("the pre-check's saved limits are not a JSON object: none restored")
        interrupted = []
        for name in self.kept.names("results-"):
            results = self.kept.read(name)
            student = results.get("student") if isinstance(results, dict) else None
            checks = results.get("checks") if isinstance(results, dict) else None
            if not isinstance(student, str) or student_file(student) != name or not isinstance(checks, list):
                log.error("the pre-check's saved results %s cannot be read: left out", name)
                continue
            for entry in checks:
                check = _restored(student, entry)
                if check is None:
                    log.error("a saved result of %s cannot be read: left out", name)
                    continue
                if check.state != DONE:  # it was waiting or running when the service stopped
                    self.limits.give_back(student, check.notebook, check.taken_at)
                    check.state, check.reply = DONE, not_run_reply()
                    interrupted.append(student)
                check.finished.set()
                self._keep(check)
        for student in dict.fromkeys(interrupted):
            self._save(student)


def _restored(student: str, entry: object) -> Check | None:
    """A check read back from the state folder, or None when it cannot be read."""
    if not isinstance(entry, dict):
        return None
    check_id, notebook, taken_at, state, reply = (
        entry.get(name) for name in ("id", "notebook", "taken_at", "state", "reply")
    )
    if not (isinstance(check_id, str) and isinstance(notebook, str) and state in (QUEUED, RUNNING, DONE)):
        return None
    if not isinstance(taken_at, (int, float)) or isinstance(taken_at, bool) or taken_at != taken_at:
        return None
    if state == DONE and not isinstance(reply, dict):
        return None
    return Check(check_id, student, notebook, float(taken_at), state=state, reply=reply)


def _shown(value: object) -> str:
    """A value the request carried, said back short."""
    said = repr(value)
    return said if len(said) <= ECHO_LIMIT else said[:ECHO_LIMIT] + "..."


def _notebook_name(value: object) -> str | None:
    """`010_history` from "010_history.ipynb" (or from the bare name); None for anything that is not a plain file name."""
    if not isinstance(value, str) or "/" in value or "\\" in value or value.startswith("."):
        return None
    return value.removesuffix(".ipynb")


def _content(value: object) -> bytes | Refusal:
    """The uploaded notebook as bytes, refused when it is no notebook or too large."""
    if not isinstance(value, dict) or not isinstance(value.get("cells"), list):
        return Refusal(Reason.BAD_REQUEST, "the request carries no notebook (`content`: the saved .ipynb as JSON)")
    data = json.dumps(value).encode()
    if len(data) > MAX_NOTEBOOK_BYTES:
        return Refusal(Reason.BAD_REQUEST, f"the notebook is larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
    return data
