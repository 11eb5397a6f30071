"""Grade one submission at a time with real nbgrader, in a private course directory.

A grading worker builds one `ScratchGrader` and keeps it: nbgrader and its
configuration are loaded once per worker instead of once per submission. The
run's settings come from the coordinator, as the `GradingRun` it wrote beside
the template, so a worker on another machine grades exactly as it asked.
Whatever nbgrader writes stays in the scratch directory; the results travel
back as plain values (the gradebook record and the graded files).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import socket
import time
import traceback
from pathlib import Path

import nbformat
from nbgrader.apps import NbGraderAPI
from nbgrader.converters import Autograde
from traitlets.config import Config

from gradekit.core.course import Course, load_course
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.log import hush_known_noise
from gradekit.core.nbgrader_in_process import course_api, course_config, nbgrader_error
from gradekit.core.notes import Note, NoteKind
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status
from gradekit.grading import kernel_cgroups, worker_box
from gradekit.grading.gradebook_records import NotebookRecord, SubmissionRecord, read_record
from gradekit.grading.grader_failures import THE_WARM_PARENT_OUTLIVES, backoff_seconds
from gradekit.grading.grading_run import GradingRun
from gradekit.grading.hidden_lines import hidden_test_lines
from gradekit.grading.idle_allowance import IdleAllowance
from gradekit.grading.intake import Intake, take_in
from gradekit.grading.phase_clock import Phase, PhaseTimes
from gradekit.grading.pristine_files import PristineFiles, remove_path
from gradekit.grading.run_sink import RunSink
from gradekit.grading.scratch_gradebook import UnsyncedGradebook, close_connections, share_engine
from gradekit.grading.sealed_checks import HELPER_MODULES, SealedSources
from gradekit.grading.timed_steps import timed_gradebook_steps
from gradekit.grading.warm_kernels import discard_zygote
from gradekit.sandbox.kernel_guard import PROTECTED_VARIABLE

WORKER_ID = f"{socket.gethostname()}:{os.getpid()}"

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, kw_only=True)  # built by name, as every outcome is
class GradedSubmission(Outcome):
    """One submission's outcome as a worker hands it back: the outcome, and what the coordinator needs to store it.

    The coordinator writes `record` and `files` to the course and keeps the
    plain outcome as the submission's row (`as_outcome`); the pre-check reads
    the graded files to word its reply.
    """

    record: SubmissionRecord | None  # the gradebook record to store; None when nothing was graded
    files: tuple[tuple[str, bytes], ...]  # the graded notebooks, by path under the student's folder
    seconds: float  # how long grading it took, its retries included
    internal_error: str = ""  # the formatted traceback when our own code failed, for the coordinator's log
    phases: PhaseTimes = PhaseTimes()  # where `seconds` went (phase_clock.py); empty when nothing was timed

    @property
    def ok(self) -> bool:
        return self.status.has_grades


def grader_error(
    student_id: str,
    failure: GraderFailure,
    attempts: int,
    seconds: float = 0.0,
    worker: str = "",
    internal_error: str = "",
) -> GradedSubmission:
    """The row of a submission whose grading failed for the grader's own reason on every try: nothing is scored."""
    tries = f" (tried {attempts} times)" if attempts > 1 else ""
    return GradedSubmission(
        student_id=student_id,
        status=Status.GRADER_ERROR,
        message=f"{failure}{tries}",
        record=None,
        files=(),
        seconds=seconds,
        worker=worker,
        internal_error=internal_error,
        cause=failure.cause,
        attempts=attempts,
    )


def nbgrader_api(
    course: Course, warm_kernels: bool, cell_timeout: int | None = None, execute: dict[str, object] | None = None
) -> NbGraderAPI:
    """An in-process nbgrader pointed at `course`, configured as the course's nbgrader_config.py says.

    With `warm_kernels`, notebooks run in guarded kernels forked from a process
    that has already imported torch (see safe_execute.py), whose traits
    `execute` sets (the run's sink, hidden lines and sealed sources); every
    other step is nbgrader's own, in the order the configuration lists them.
    """
    config = course_config(course)
    if cell_timeout:
        config.Execute.timeout = int(cell_timeout)
    if warm_kernels:
        from nbgrader.preprocessors import CheckCellMetadata, Execute

        from gradekit.grading.metadata_check import QuickCheckCellMetadata
        from gradekit.grading.safe_execute import SafeExecute

        ours = {Execute: SafeExecute, CheckCellMetadata: QuickCheckCellMetadata}
        config.Autograde.sanitize_preprocessors = [ours.get(step, step) for step in _steps(config, "sanitize")]
        steps = [ours.get(step, step) for step in _steps(config, "autograde")]
        for name, value in (execute or {}).items():
            setattr(config.SafeExecute, name, value)
        sink = (execute or {}).get("sink")
        if isinstance(sink, RunSink):
            steps = timed_gradebook_steps(steps, sink.clock, config)
        config.Autograde.autograde_preprocessors = steps
        config.WarmProvisioner.allow_unconfined = course.allow_unconfined  # the kernels' provisioner reads it
        # The notebook is checked against its schema once its steps have run, not after each of them
        # (fourteen checks a notebook): a notebook that ends invalid fails as before, naming the last step.
        config.Exporter.optimistic_validation = True
    return course_api(course, config)


def _steps(config: Config, pipeline: str) -> list:
    """The steps of nbgrader's `pipeline` ("sanitize" or "autograde") as the configuration lists them."""
    name = f"{pipeline}_preprocessors"
    return list(config.Autograde[name] if name in config.Autograde else Autograde.class_traits()[name].default())


class ScratchGrader:
    def __init__(self, template_root: Path, scratch_root: Path, warm_kernels: bool = True):
        template_root = Path(template_root)
        # This worker's one read of the configuration: nbgrader's steps are code and cannot travel as data.
        configured = load_course()
        self.run = GradingRun.read(template_root, configured)
        self.course = self.run.applied_to(configured).at(scratch_root)
        if scratch_root.exists():
            shutil.rmtree(scratch_root)
        # Kept in memory and put back as fresh copies for every submission: nothing one student's
        # code might change in the scratch course can reach the next student.
        template_files = _files(template_root / "source", template_root) + _files(
            template_root / "gradebook.db", template_root
        )
        self.kept = PristineFiles(template_files, folders=("source",))
        self.sink = RunSink()  # what the Execute step hands back from each run
        self.unsynced = UnsyncedGradebook(self.course.root.resolve() / "gradebook.db").install()
        share_engine(self.course.db_url)
        execute = self._execute_settings(template_root) if warm_kernels else None
        self.api = nbgrader_api(self.course, warm_kernels, self.run.cell_timeout, execute)
        self.warm_kernels = warm_kernels
        # Kernels inherit these; forked kernels are held to them (kernel_zygote.py, kernel_guard.py).
        os.environ["KIT_KERNEL_MEMORY_BYTES"] = str(int(self.course.kernel_memory_gb * 2**30))
        # The exchange holds every student's submission and feedback, wherever it lies.
        protected = {str(self.course.root), str(template_root.resolve()), *self.run.protected_roots}
        protected |= {str(configured.root), str(configured.exchange_root.resolve())}
        # Set again at each grading: a process may keep graders of several templates (a pre-check's, one per notebook).
        self.protected = os.pathsep.join(sorted(protected))
        self._last_attempt = True

    def _execute_settings(self, template_root: Path) -> dict[str, object]:
        """The Execute step's traits: the sink, the course's hidden lines, and the trusted sources it grades from."""
        notebooks = SealedSources(
            (Path(relative).stem, nbformat.reads(content.decode(), as_version=4))
            for relative, content in self.kept.files.items()
            if relative.endswith(".ipynb")
        )
        folder = template_root / "source" / self.course.assignment_id
        helpers = {name: folder / f"{name}.py" for name in HELPER_MODULES if (folder / f"{name}.py").exists()}
        hidden = set().union(*(hidden_test_lines(notebook) for notebook in notebooks.values()))
        # sealed: the test cells run here, from these trusted copies
        return {"sink": self.sink, "hidden_lines": hidden, "sealed_sources": notebooks, "sealed_helpers": helpers}

    def grade(self, submission_dir: Path, student_id: str) -> GradedSubmission:
        """Grade one submission, trying again on fresh kernels while the grader's own failures last."""
        started = time.monotonic()
        os.environ[PROTECTED_VARIABLE] = self.protected  # this template's folders and scratch course, for its kernels
        self.sink.clock.restart()
        hush_known_noise()  # a worker on another machine did not inherit the command's filters
        attempts = self.course.grader_attempts
        for attempt in range(1, attempts + 1):
            self._last_attempt = attempt == attempts
            try:
                graded = self._grade_once(Path(submission_dir), student_id, started)
                return dataclasses.replace(graded, attempts=attempt, phases=self.sink.clock.times())
            except GraderFailure as error:
                failure, trace = error, traceback.format_exc()
            except Exception as error:  # our own code failed: it must not take the worker down
                failure = GraderFailure(GraderCause.INTERNAL_ERROR, f"{type(error).__name__}: {error}")
                trace = traceback.format_exc()
            finally:
                shutil.rmtree(self.course.submitted_dir / student_id, ignore_errors=True)
                shutil.rmtree(self.course.autograded_dir / student_id, ignore_errors=True)
            log.warning("%s: try %d of %d failed: %s", student_id, attempt, attempts, failure)
            if attempt < attempts:
                if failure.cause not in THE_WARM_PARENT_OUTLIVES:
                    discard_zygote()  # the next try starts from a fresh warm parent
                time.sleep(backoff_seconds(attempt + 1, self.course.retry_backoff_seconds))
        return grader_error(student_id, failure, attempts, time.monotonic() - started, WORKER_ID, trace)

    def _grade_once(self, submission_dir: Path, student_id: str, started: float) -> GradedSubmission:
        """One try; a failure of the grader's own is raised, every other outcome is a row."""
        self._reset_course()
        intake = take_in(Path(submission_dir), self.course.source_dir)
        if intake.problem:
            return self._failed(student_id, intake.problem, started, intake.notes)
        self.sink.idle = IdleAllowance(self.course.idle_seconds * max(len(intake.notebooks), 1))
        outcome, notes = self._autograde(student_id, intake)
        if not outcome["success"]:
            return self._failed(student_id, nbgrader_error(outcome), started, intake.notes + notes)
        reports = tuple(self.sink.reports)
        findings = intake.findings + tuple(f for report in reports for f in report.findings)
        notes += tuple(n for report in reports for n in report.notes) + self._unconfined()
        with self.sink.clock.phase(Phase.GRADEBOOK):
            record = read_record(self.course, student_id)
        if findings:
            record = withhold(record, {finding.notebook for finding in findings})
        graded_dir = self.course.autograded_dir / student_id / self.course.assignment_id
        return GradedSubmission(
            student_id=student_id,
            status=Status.FLAGGED if findings else Status.GRADED,
            message=("grade withheld for a TA: " + "; ".join(f.text for f in findings)) if findings else "",
            record=record,
            files=_files(graded_dir),
            seconds=time.monotonic() - started,
            worker=WORKER_ID,
            notes=intake.notes + notes,
            findings=findings,
        )

    def _unconfined(self) -> tuple[Note, ...]:
        """Notes on the row when its kernels ran without their box (only as the TA allowed) or without a cgroup."""
        reason = worker_box.unavailable_reason() if self.warm_kernels else None
        unconfined = (Note(NoteKind.UNCONFINED, "", reason),) if reason else ()
        no_group = kernel_cgroups.unavailable_reason() if self.warm_kernels else None  # decided at the first kernel
        return unconfined + ((Note(NoteKind.NO_TREE_LIMIT, "", no_group),) if no_group else ())

    def _autograde(self, student_id: str, intake: Intake) -> tuple[dict, tuple[Note, ...]]:
        """nbgrader's autograde of what intake kept; notebooks nbgrader cannot process are set aside.

        nbgrader fails a whole submission for one notebook it cannot handle; then
        each notebook is tried alone and the rest are graded without the culprits.
        """
        outcome = self._run(student_id, intake)
        if outcome["success"] or len(intake.notebooks) < 2:
            return outcome, ()
        culprits = {}
        for name, notebook in intake.notebooks:
            alone = self._run(student_id, dataclasses.replace(intake, notebooks=((name, notebook),)), retry=False)
            if not alone["success"]:
                culprits[name] = nbgrader_error(alone)
        kept = tuple(pair for pair in intake.notebooks if pair[0] not in culprits)
        if not kept:
            return outcome, ()
        notes = tuple(Note(NoteKind.NBGRADER_FAILED, name, why) for name, why in culprits.items())
        return self._run(student_id, dataclasses.replace(intake, notebooks=kept)), notes

    def _run(self, student_id: str, intake: Intake, retry: bool = True) -> dict:
        """One nbgrader autograde of `intake`, tried a second time when nbgrader itself fails (a kernel that did not start)."""
        target = self.course.submitted_dir / student_id / self.course.assignment_id
        shutil.rmtree(target, ignore_errors=True)
        intake.write(target)
        for attempt in range(2 if retry else 1):
            self._reset_course()
            self.sink.clear()
            with self.sink.clock.phase(Phase.NBGRADER):
                outcome = self.api.autograde(self.course.assignment_id, student_id, force=True, create=True)
            self.sink.raise_noticed(self._last_attempt)
            if outcome["success"]:
                break
        return outcome

    def _reset_course(self) -> None:
        """The scratch course's source and gradebook exactly as the template held them."""
        close_connections(self.course.db_url)  # none may stay open on the file about to be replaced
        for name in ("gradebook.db-journal", "gradebook.db-wal"):
            remove_path(self.course.root / name)
        self.kept.restore(self.course.root)

    def _failed(self, student_id: str, message: str, started: float, notes: tuple[Note, ...] = ()) -> GradedSubmission:
        seconds = time.monotonic() - started
        return GradedSubmission(
            student_id=student_id,
            status=Status.FAILED,
            message=message,
            record=None,
            files=(),
            seconds=seconds,
            worker=WORKER_ID,
            notes=notes,
        )


def withhold(record: SubmissionRecord, notebooks: set[str]) -> SubmissionRecord:
    """The record with `notebooks` flagged and every one of their grades waiting for a TA."""

    def held(notebook: NotebookRecord) -> NotebookRecord:
        if notebook.name not in notebooks:
            return notebook
        grades = tuple(dataclasses.replace(grade, needs_manual_grade=True) for grade in notebook.grades)
        return dataclasses.replace(notebook, flagged=True, grades=grades)

    return dataclasses.replace(record, notebooks=tuple(held(n) for n in record.notebooks))


def _files(entry: Path, base: Path | None = None) -> tuple[tuple[str, bytes], ...]:
    """(path relative to `base`, content) of the file `entry` or of every file below it; `base` defaults to `entry`."""
    paths = sorted(entry.rglob("*")) if entry.is_dir() else [entry]
    return tuple((str(path.relative_to(base or entry)), path.read_bytes()) for path in paths if path.is_file())
