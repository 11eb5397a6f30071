"""Each of the grader's own failures, injected: it is retried to a correct grade, or, when it
persists, the row is a grader error and the gradebook keeps what it held.

Faults are injected by monkeypatching in this process before the workers fork from it, so each
worker carries the fault; a marker file makes a fault happen once across processes.
"""

import asyncio
import dataclasses
import io
import os
import shutil
import signal
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from gradekit.authoring.release import clone_workspace
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.notes import NoteKind
from gradekit.core.status import Status
from gradekit.grading import kept_parents, row_store, safe_execute, sealed_exchange, submission_grader, warm_kernels
from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import LocalExecutor, grade_task
from gradekit.grading.gradebook_records import read_record
from gradekit.grading.progress import Progress
from gradekit.grading.prompt_client import PromptKernelClient
from gradekit.proof.subjects import REFERENCE_ID
from gradekit.sandbox.crossing import CrossingError
from gradekit.sandbox.kernel_guard import ARM_EVENT

pytestmark = pytest.mark.nbgrader

NOTEBOOK = "010_history"
STUDENT = "ada"


@pytest.fixture
def one_student(small_cohort, tmp_path):
    """A course where one student handed in the reference; tried twice, with a short wait, per grading."""
    scratch = clone_workspace(small_cohort[0], tmp_path / "course")
    shutil.copytree(small_cohort[0].submitted_dir / REFERENCE_ID, scratch.submitted_dir / STUDENT)
    return dataclasses.replace(scratch, grader_attempts=2, retry_backoff_seconds=0.1)


@pytest.fixture
def parent_starts(monkeypatch, tmp_path):
    """How many warm parents the gradings have started so far, counted in whichever process started them.

    The test's process keeps none of an earlier test's (kept_parents.py): its first grading starts its own.
    """
    kept_parents.end_kept()
    record = tmp_path / "warm-parents-started"
    start = warm_kernels.Zygote.__init__

    def counted(self, *args, **kwargs):
        with open(record, "a") as started:
            started.write(".")
        start(self, *args, **kwargs)

    monkeypatch.setattr(warm_kernels.Zygote, "__init__", counted)  # before the workers fork, so theirs count too
    return lambda: len(record.read_text()) if record.exists() else 0


def _grade(course, task=grade_task):
    result = grade_cohort(course, LocalExecutor(1, task=task), (NOTEBOOK,), Progress(1, io.StringIO()))
    (row,) = result.rows
    return row


def _once(marker: Path) -> bool:
    """True the first time it is asked for `marker`, in whichever process asks."""
    try:
        marker.touch(exist_ok=False)
    except FileExistsError:
        return False
    return True


def _full_marks(row) -> bool:
    return row.status is Status.GRADED and row.grades is not None and row.score == row.grades.max_score > 0


def _failing(method, cause_of_failure, marker: Path | None):
    """`method`, failing by calling `cause_of_failure` the first time (`marker`), or every time (None)."""

    def failing(*args, **kwargs):
        if marker is None or _once(marker):
            cause_of_failure(*args, **kwargs)
        return method(*args, **kwargs)

    return failing


def _async_failing(method, cause_of_failure, marker: Path | None):
    async def failing(*args, **kwargs):
        if marker is None or _once(marker):
            cause_of_failure(*args, **kwargs)
        return await method(*args, **kwargs)

    return failing


def _raise(error):
    def raising(*args, **kwargs):
        raise error

    return raising


def _inject(monkeypatch, cause: GraderCause, marker: Path | None) -> None:
    """Make the grading meet `cause` once (or always, without a marker)."""
    if cause is GraderCause.ZYGOTE_START:
        fail = _raise(OSError("the kernel zygote could not fork: injected"))
        monkeypatch.setattr(warm_kernels.Zygote, "spawn", _failing(warm_kernels.Zygote.spawn, fail, marker))
    elif cause is GraderCause.KERNEL_START:
        fail = _raise(RuntimeError("Kernel didn't respond in 60 seconds"))
        ready = PromptKernelClient.wait_for_ready
        monkeypatch.setattr(PromptKernelClient, "wait_for_ready", _async_failing(ready, fail, marker))
    elif cause is GraderCause.GUARD_NOT_ARMED:
        tell = safe_execute.SafeExecute._tell_guard

        async def unarmed(self, event, argument):
            if event == ARM_EVENT and (marker is None or _once(marker)):
                return  # the arming message is lost
            return await tell(self, event, argument)

        monkeypatch.setattr(safe_execute.SafeExecute, "_tell_guard", unarmed)
    elif cause is GraderCause.TEMP_FILE_MISSING:
        answer = sealed_exchange.SealedExchange.answer

        def vanish(self, request):
            shutil.rmtree(self.mailbox.folder.path)

        monkeypatch.setattr(sealed_exchange.SealedExchange, "answer", _async_failing(answer, vanish, marker))
    elif cause is GraderCause.REPLY_UNREADABLE:
        fail = _raise(CrossingError("the kernel's answer is not a plain file of bounded size"))
        reply = sealed_exchange.Mailbox.reply
        monkeypatch.setattr(sealed_exchange.Mailbox, "reply", _failing(reply, fail, marker))
    elif cause is GraderCause.OVERLOADED:  # as the time limit raises it when the machine, not the answer, is slow
        answer = sealed_exchange.SealedExchange.answer
        fail = _raise(GraderFailure(GraderCause.OVERLOADED, "injected"))
        monkeypatch.setattr(sealed_exchange.SealedExchange, "answer", _async_failing(answer, fail, marker))
    elif cause is GraderCause.KERNEL_KILLED:  # as the machine's out-of-memory killer or an operator would
        await_answer = safe_execute.SafeExecute.await_answer

        def kill(self, msg_id):
            os.kill(self.km.provisioner.pid, signal.SIGKILL)

        monkeypatch.setattr(safe_execute.SafeExecute, "await_answer", _async_failing(await_answer, kill, marker))
    elif cause is GraderCause.STALLED:  # a call that never comes back, as the hang the watchdog is there for
        answer = sealed_exchange.SealedExchange.answer
        monkeypatch.setattr(safe_execute, "WATCHDOG_FACTOR", 0)  # about six seconds, not minutes
        monkeypatch.setattr(safe_execute, "WATCHDOG_SLACK", 1)

        async def stalls(self, request):
            if marker is None or _once(marker):
                await asyncio.sleep(3600)
            return await answer(self, request)

        monkeypatch.setattr(sealed_exchange.SealedExchange, "answer", stalls)
    elif cause is GraderCause.INTERNAL_ERROR:
        fail = _raise(KeyError("injected"))
        read = submission_grader.read_record
        monkeypatch.setattr(submission_grader, "read_record", _failing(read, fail, marker))
    else:
        raise AssertionError(f"no injection for {cause}")


KERNEL_LEVEL = [
    GraderCause.ZYGOTE_START,
    GraderCause.KERNEL_START,
    GraderCause.GUARD_NOT_ARMED,
    GraderCause.TEMP_FILE_MISSING,
    GraderCause.REPLY_UNREADABLE,
    GraderCause.OVERLOADED,
    GraderCause.KERNEL_KILLED,
    GraderCause.STALLED,
    GraderCause.INTERNAL_ERROR,
]


def test_each_failure_of_the_grader_met_once_is_retried_until_full_marks(one_student, monkeypatch, tmp_path):
    """Every kernel-level cause is injected once, in one grading: each try meets the next, the last grades in full.

    One grading rather than one a cause keeps the suite short; the markers show every fault happened.
    """
    for cause in KERNEL_LEVEL:
        _inject(monkeypatch, cause, tmp_path / f"{cause.name}-once")
    # A try for each fault and one to grade in full, and two to spare: a loaded machine may hold an honest
    # sealed call past the shortened watchdog, which costs a try of its own and must not end the grading.
    course = dataclasses.replace(one_student, grader_attempts=len(KERNEL_LEVEL) + 3, retry_backoff_seconds=0.01)
    row = _grade(course)
    assert [cause for cause in KERNEL_LEVEL if not (tmp_path / f"{cause.name}-once").exists()] == []
    assert _full_marks(row), (row.status, row.message)
    assert row.attempts > 1 and not row.findings and row.cause is None


@pytest.mark.parametrize("cause", [GraderCause.ZYGOTE_START, GraderCause.TEMP_FILE_MISSING], ids=str)
def test_a_failure_that_persists_is_a_grader_error_and_the_gradebook_keeps_its_grade(
    one_student, monkeypatch, cause, parent_starts
):
    assert _full_marks(_grade(one_student))
    before, parents_before = read_record(one_student, STUDENT), parent_starts()
    _inject(monkeypatch, cause, None)
    row = _grade(one_student)
    assert row.status is Status.GRADER_ERROR and row.cause is cause and row.grades is None
    assert "tried 2 times" in row.message and not row.findings
    assert read_record(one_student, STUDENT) == before
    # The first try is lent the parent the good run kept; the try after its failure starts a fresh one.
    assert parent_starts() - parents_before == 1, "the fault may lie in the warm parent: a retry starts a fresh one"


def test_an_unreadable_reply_that_persists_is_the_submissions_finding(one_student, monkeypatch, parent_starts):
    """A submission can break its replies itself: on a fresh kernel every time, the finding stands."""
    _inject(monkeypatch, GraderCause.REPLY_UNREADABLE, None)
    row = _grade(one_student)
    assert row.status is Status.FLAGGED and row.cause is None
    assert any("could not be read" in finding.text for finding in row.findings)
    assert row.attempts == 2 and parent_starts() == 1, "a kernel's fault spares the warm parent the retry forks from"


def test_a_kernel_killed_on_every_try_leaves_the_submissions_own_outcome(one_student, monkeypatch, parent_starts):
    """A kernel may SIGKILL itself: on a fresh kernel every time, its stopped cells score as any dead kernel's.

    Its retries fork from the same warm parent: a kernel that kills itself costs the class no new parent's imports.
    """
    _inject(monkeypatch, GraderCause.KERNEL_KILLED, None)
    row = _grade(one_student)
    assert row.status is Status.GRADED and row.cause is None and row.attempts == 2 and parent_starts() == 1
    assert not _full_marks(row) and any(note.kind is NoteKind.KERNEL_STOPPED for note in row.notes)


def die_on_first_try(template_root, folder, student):
    """Real grading, except that the worker process is killed outright the first time."""
    if _once(Path(template_root).parent / "worker-killed"):
        os.kill(os.getpid(), signal.SIGKILL)
    return grade_task(template_root, folder, student)


def test_a_lost_worker_is_replaced_and_the_submission_graded_again(one_student):
    row = _grade(one_student, die_on_first_try)
    assert (one_student.root / "worker-killed").exists()
    assert _full_marks(row)


def _busy(*args, **kwargs):
    raise OperationalError("INSERT", {}, Exception("database is locked"))


def test_a_busy_gradebook_is_waited_out(one_student, monkeypatch, tmp_path):
    monkeypatch.setattr(row_store, "put_record", _failing(row_store.put_record, _busy, tmp_path / "busy-once"))
    row = _grade(one_student)
    assert (tmp_path / "busy-once").exists() and _full_marks(row)


def test_a_gradebook_that_stays_busy_is_a_grader_error_and_nothing_is_stored(one_student, monkeypatch):
    assert _full_marks(_grade(one_student))
    before = read_record(one_student, STUDENT)
    graded_copy = one_student.autograded_dir / STUDENT / one_student.assignment_id / f"{NOTEBOOK}.ipynb"
    stamp = graded_copy.stat().st_mtime_ns
    monkeypatch.setattr(row_store, "put_record", _busy)
    row = _grade(one_student)
    assert row.status is Status.GRADER_ERROR and row.cause is GraderCause.GRADEBOOK_BUSY
    assert read_record(one_student, STUDENT) == before and graded_copy.stat().st_mtime_ns == stamp
