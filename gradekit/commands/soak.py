"""The soak: grade one cohort on a quiet machine, then again under load and injected faults, and compare.

Every fault the soak injects is the grader's (a lost kernel or worker, a
stalled worker, a vanished temporary folder, a busy gradebook), and so is an
overloaded machine: none may change a student's grade. The soak counts the
rows whose gradebook record or status differs between the two runs; it
passes only when that count is 0.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import logging
import os
import random
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Iterator, Mapping

from nbgrader.api import MissingEntry

from gradekit.authoring.release import clone_workspace, new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.commands.soak_faults import Fault, FaultInjector, FaultPlan
from gradekit.commands.soak_load import Load
from gradekit.commands.soak_processes import ProcessEntry, grading_tree, is_alive
from gradekit.core.course import Course
from gradekit.core.manifest import Manifest
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status
from gradekit.grading import kept_parents
from gradekit.grading.cohort import CohortResult, grade_cohort
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.gradebook_records import SubmissionRecord, read_record
from gradekit.grading.progress import Progress
from gradekit.proof.packing import SyntheticStudent, pack_subjects
from gradekit.proof.subjects import Subject, proof_subjects, write_student

logger = logging.getLogger(__name__)

DEFAULT_NOTEBOOKS = 300  # the bar; about the proof's whole cohort and ten more full submissions
FULL_NOTEBOOKS = 1000  # for machines with cores to spare
MEMORY_BYTES = 512 * 2**20
LEFTOVER_GRACE_SECONDS = 10.0


@dataclasses.dataclass(frozen=True)
class SoakSettings:
    jobs: int
    notebooks: int = DEFAULT_NOTEBOOKS  # at least this many notebooks in the cohort
    hogs_per_core: int = 4
    memory_bytes: int = MEMORY_BYTES
    faults: FaultPlan = FaultPlan()

    @property
    def hogs(self) -> int:
        return self.hogs_per_core * (os.cpu_count() or 1)


# ---- the cohort ---------------------------------------------------------------------------------


def soak_students(manifest: Manifest, notebooks: int, seed: int) -> tuple[SyntheticStudent, ...]:
    """At least `notebooks` notebooks: the reference, the blank stubs, controls and alternatives, then repeats.

    The controls and correct alternatives are taken in an order shuffled by
    `seed` and packed into students as the proof packs them; when they are all
    taken, further students submit the reference or the blank stubs again.
    """
    subjects = proof_subjects(manifest, load_controls(manifest))
    whole = [s for s in subjects if s.control is None]  # the reference and the blank stubs
    rewritten = [s for s in subjects if s.control is not None]
    random.Random(seed).shuffle(rewritten)
    chosen: list[Subject] = list(whole)
    for subject in rewritten:
        if _count(chosen) >= notebooks:
            break
        chosen.append(subject)
    students = list(pack_subjects(tuple(chosen)))
    repeat = 1
    while sum(len(s.notebooks) for s in students) < notebooks:
        repeat += 1
        for subject in whole:
            students.append(SyntheticStudent(f"{subject.student_id}-{repeat:02d}", (subject,)))
    return tuple(students)


def _count(subjects: list[Subject]) -> int:
    return sum(len(subject.notebooks) for subject in subjects)


def kinds_of(student: SyntheticStudent) -> dict[str, int]:
    """How many notebooks of each kind (reference, blank, control, alternative) the student submits."""
    counts: dict[str, int] = {}
    for subject in student.subjects:
        counts[subject.kind] = counts.get(subject.kind, 0) + len(subject.notebooks)
    return counts


# ---- the comparison -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ComparedRow:
    """One student's row in one run: its status and what the gradebook holds (None: nothing stored)."""

    status: Status
    record: SubmissionRecord | None
    message: str = ""


@dataclasses.dataclass(frozen=True)
class RowDifference:
    student_id: str
    quiet: ComparedRow
    loaded: ComparedRow

    @property
    def what(self) -> str:
        if self.quiet.status != self.loaded.status:
            return f"{self.quiet.status} on a quiet machine, {self.loaded.status} under load: {self.loaded.message}"
        return "the gradebook records differ"


def differing_rows(quiet: Mapping[str, ComparedRow], loaded: Mapping[str, ComparedRow]) -> tuple[RowDifference, ...]:
    """Every student whose status or gradebook record differs between the runs, by student id.

    A student missing from one run differs too: the loaded run then lost a row.
    """
    missing = ComparedRow(Status.FAILED, None, "no row")
    differences = []
    for student in sorted(set(quiet) | set(loaded)):
        before, after = quiet.get(student, missing), loaded.get(student, missing)
        if before.status != after.status or before.record != after.record:
            differences.append(RowDifference(student, before, after))
    return tuple(differences)


def retries_of(row: Outcome) -> int:
    """How many times the grader retried this row's grading after a failure of its own."""
    return row.attempts - 1


def outcomes(course: Course, result: CohortResult) -> dict[str, ComparedRow]:
    return {row.student_id: ComparedRow(row.status, _record(course, row), row.message) for row in result.rows}


def _record(course: Course, row: Outcome) -> SubmissionRecord | None:
    if not row.status.has_grades:
        return None  # nothing stored for it; a stale record from elsewhere must not count
    try:
        return read_record(course, row.student_id)
    except MissingEntry:
        return None


# ---- the run ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SoakResult:
    """Both gradings of one cohort, the load and faults of the second, and how their rows compare."""

    students: int
    notebooks: int
    notebook_kinds: dict[str, int]  # reference, blank, control, alternative -> notebooks
    jobs: int
    hogs: int
    memory_bytes: int
    quiet_seconds: float
    loaded_seconds: float
    faults: tuple[Fault, ...]
    differences: tuple[RowDifference, ...]
    retries: int
    grader_errors: int  # rows of the loaded run with nothing graded
    load_pids: tuple[int, ...]  # every process the load started: all gone when the soak returns
    leftovers: tuple[int, ...]  # grading processes still alive after grading, which the soak killed

    @property
    def differing(self) -> int:
        return len(self.differences)

    @property
    def ok(self) -> bool:
        return self.differing == 0


def run_soak(course: Course, manifest: Manifest, settings: SoakSettings) -> SoakResult:
    names = tuple(entry.name for entry in manifest.notebooks)
    students = soak_students(manifest, settings.notebooks, settings.faults.seed)
    notebooks = sum(len(student.notebooks) for student in students)
    with tempfile.TemporaryDirectory(prefix="gradekit-soak-") as scratch_name:
        scratch = Path(scratch_name)
        quiet = new_workspace(course, scratch / "quiet", names)
        for student in students:
            write_student(quiet, quiet.release_dir, manifest, student.student_id, student.subjects)
        loaded = clone_workspace(quiet, scratch / "loaded")
        shutil.copytree(quiet.submitted_dir, loaded.submitted_dir)
        logger.info("soak cohort: %d students, %d notebooks, %d workers", len(students), notebooks, settings.jobs)
        with own_temp_dir(scratch / "tmp") as temp_dir, _ending_kept_parents():
            quiet_result = _grade(quiet, names, settings.jobs)
            logger.info("quiet run: %.1f s; now %d hogs and the faults", quiet_result.seconds, settings.hogs)
            with Load(settings.hogs, settings.memory_bytes) as load:
                gradebook = loaded.root / "gradebook.db"
                share = functools.partial(graded_share, loaded, len(students))
                faults = FaultInjector(settings.faults, os.getpid(), load.pids, gradebook, temp_dir, share)
                try:
                    with faults:
                        loaded_result = _grade(loaded, names, settings.jobs)
                finally:  # whether grading ended or raised, nothing the faults cut loose may outlive the soak
                    kept_parents.end_kept()  # the warm parents the runs kept are not left over: they are ended
                    leftovers = stop_leftovers(faults.seen)
        differences = differing_rows(outcomes(quiet, quiet_result), outcomes(loaded, loaded_result))
    return SoakResult(
        students=len(students),
        notebooks=notebooks,
        notebook_kinds=_kinds(students),
        jobs=settings.jobs,
        hogs=settings.hogs,
        memory_bytes=settings.memory_bytes,
        quiet_seconds=quiet_result.seconds,
        loaded_seconds=loaded_result.seconds,
        faults=tuple(faults.faults),
        differences=differences,
        retries=sum(retries_of(row) for row in loaded_result.rows),
        grader_errors=sum(1 for row in loaded_result.rows if row.status.failed),
        load_pids=tuple(sorted(load.pids)),
        leftovers=leftovers,
    )


@contextlib.contextmanager
def _ending_kept_parents() -> Iterator[None]:
    """The warm parents the soak's runs kept end with it, however it ends: their folders are its scratch's."""
    try:
        yield
    finally:
        kept_parents.end_kept()


def graded_share(course: Course, students: int) -> float:
    """The share of the cohort graded so far, seen from outside: the coordinator stores each graded submission."""
    folder = course.autograded_dir
    return len(list(folder.iterdir())) / students if folder.is_dir() else 0.0


def _grade(course: Course, notebooks: tuple[str, ...], jobs: int) -> CohortResult:
    count = len(list(course.submitted_dir.iterdir()))
    return grade_cohort(course, LocalExecutor(jobs), notebooks, Progress(count, io.StringIO()))


def _kinds(students: tuple[SyntheticStudent, ...]) -> dict[str, int]:
    total: dict[str, int] = {}
    for student in students:
        for kind, count in kinds_of(student).items():
            total[kind] = total.get(kind, 0) + count
    return total


@contextlib.contextmanager
def own_temp_dir(folder: Path) -> Iterator[Path]:
    """Grading's temporary files (workers' scratch courses, kernels' private folders) go to `folder`.

    Workers fork from this process and inherit the setting; so every kernel
    folder the fault injector may delete is one of this soak's own.
    """
    folder.mkdir(parents=True)
    before = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        variable, tempfile.tempdir = before
        if variable is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = variable


def stop_leftovers(seen: Mapping[int, ProcessEntry], grace_seconds: float = LEFTOVER_GRACE_SECONDS) -> tuple[int, ...]:
    """Kill the grading processes that outlived the run (a lost worker's zygote or kernel); their pids.

    The grader stops its own processes, and a zygote leaves on its own a moment
    after its worker: what still runs after `grace_seconds` is what a fault cut
    off from whoever would have stopped it.
    """
    watched = {**seen, **{entry.pid: entry for entry in grading_tree(os.getpid()).everyone}}
    deadline = time.monotonic() + grace_seconds
    while (survivors := sorted(pid for pid, entry in watched.items() if is_alive(entry))) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.1)
    for pid in survivors:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return tuple(survivors)


# ---- the report ---------------------------------------------------------------------------------


def soak_lines(result: SoakResult) -> list[str]:
    """What the command prints: the cohort, the load, each fault, retries and the differing rows."""
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(result.notebook_kinds.items()))
    lines = [
        f"cohort: {result.students} submissions, {result.notebooks} notebooks ({kinds}), {result.jobs} workers",
        f"quiet run:  {result.quiet_seconds:7.1f} s",
        f"loaded run: {result.loaded_seconds:7.1f} s  under {result.hogs} CPU hogs on {os.cpu_count()} cores"
        f" and {result.memory_bytes // 2**20} MB held",
        f"faults injected: {len(result.faults)} of {len({f.kind for f in result.faults})} kinds",
    ]
    lines += [f"  {fault.seconds:7.1f} s  {fault.kind.value}: {fault.target}" for fault in result.faults]
    lines += [
        f"retries: {result.retries}   rows with nothing graded under load: {result.grader_errors}",
        f"leftover grading processes stopped after the run: {len(result.leftovers)}",
    ]
    lines += [f"DIFFERS {difference.student_id}: {difference.what}" for difference in result.differences]
    verdict = "holds" if result.ok else "FAILS"
    lines.append(f"soak {verdict}: {result.differing} of {result.students} rows differ from the quiet run")
    return lines
