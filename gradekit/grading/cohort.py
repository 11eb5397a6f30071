"""Grade every submission of a cohort in parallel and leave the course as serial nbgrader would.

Workers grade in private directories; the coordinator alone writes to the
course: the graded files under autograded/ and the grades in the gradebook.
Rows come out ordered by student id, whatever order the workers finish in.
The course gradebook stays open for the run (row_store.py), and each row is
stored in one transaction (nbgrader commits a new student and submission on
its own). A gradebook that stays busy (another process holds its lock) is the
grader's failure: storing is tried again with backoff, and a row still not
stored is a grader error whose student keeps what the gradebook held.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from pathlib import Path
from typing import Collection, Iterable, Iterator, Mapping, Protocol

from nbgrader.api import MissingEntry

from gradekit.authoring.release import build_release, copy_source, new_workspace
from gradekit.core.course import Course
from gradekit.core.extensions import read_extensions
from gradekit.core.failures import GraderFailure
from gradekit.core.grades import SubmissionGrades
from gradekit.core.grading_stamp import GradingStamp, stamp_now
from gradekit.core.outcome import Outcome
from gradekit.grading.deadlines import record_deadlines
from gradekit.grading.gradebook import open_gradebook
from gradekit.grading.gradebook_copy import sqlite_file
from gradekit.grading.grading_run import GradingRun
from gradekit.grading.internal_errors import LOG_NAME, crashed, record_internal_errors
from gradekit.grading.phase_clock import Phase, PhaseTimes
from gradekit.grading.progress import Progress
from gradekit.grading.row_store import RowStore
from gradekit.grading.submission_grader import GradedSubmission

log = logging.getLogger(__name__)

TEMPLATE_DIR = ".grading-template"


class Executor(Protocol):
    @property
    def workers(self) -> int:
        """How many submissions it grades at once."""
        ...

    def grade_all(self, template_root: Path, tasks: Iterable[tuple[Path, str]]) -> Iterator[GradedSubmission]: ...


@dataclasses.dataclass(frozen=True)
class CohortResult:
    rows: tuple[Outcome, ...]
    seconds: float
    phases: Mapping[str, PhaseTimes] = dataclasses.field(default_factory=dict)  # by student: where the time went

    @property
    def failed(self) -> tuple[Outcome, ...]:
        """Rows with nothing graded."""
        return tuple(r for r in self.rows if r.status.failed)

    @property
    def flagged(self) -> tuple[Outcome, ...]:
        """Rows graded, but whose grade waits for a TA."""
        return tuple(r for r in self.rows if r.status.withheld)


def submitted_students(course: Course) -> list[tuple[Path, str]]:
    """(submission folder, student id) for every student who submitted the assignment, by id."""
    if not course.submitted_dir.is_dir():
        return []
    found = [
        (folder / course.assignment_id, folder.name)
        for folder in course.submitted_dir.iterdir()
        if (folder / course.assignment_id).is_dir()
    ]
    return sorted(found, key=lambda pair: pair[1])


def largest_first(tasks: list[tuple[Path, str]]) -> list[tuple[Path, str]]:
    """Deal the biggest submissions first, so that no worker is left grading a long one while the others idle."""
    return sorted(tasks, key=lambda task: -_folder_bytes(task[0]))


def _folder_bytes(folder: Path) -> int:
    try:
        return sum(path.lstat().st_size for path in folder.rglob("*"))
    except OSError:  # an unreadable submission is intake's to report, not the dealer's
        return 0


def grade_cohort(
    course: Course,
    executor: Executor,
    notebooks: tuple[str, ...],
    progress: Progress | None = None,
    cell_timeout: int | None = None,
    error_log: Path | None = None,
    only: Collection[str] = (),
) -> CohortResult:
    """Grade every submission (or the `only` students'); `cell_timeout` (seconds) overrides the course's limit.

    Tracebacks of the grader's own failures go to `error_log` (by default
    class-report/internal-errors.log in the course). Each graded row records what graded it
    (`Outcome.graded_by`): the run's copy of the checks, the kit's version, the run's start.
    """
    started = time.monotonic()
    _ensure_assignment(course)
    tasks = [task for task in submitted_students(course) if not only or task[1] in only]
    extensions = read_extensions(course.extensions_file)
    students = [student for _, student in tasks]
    record_deadlines(course, students, extensions)  # the template's copy of a SQLite gradebook carries them
    template = build_template(course, _fresh(course.root / TEMPLATE_DIR), notebooks)
    record_deadlines(template, students, extensions)
    stamp = stamp_now(template.source_dir, notebooks)  # the copy every worker grades by
    GradingRun.of(course, cell_timeout).write(template.root)  # what every worker grades by
    log.info("grading %d submissions of %s with %s", len(tasks), course.assignment_id, type(executor).__name__)
    progress = progress or Progress(len(tasks), workers=executor.workers)
    outcomes: dict[str, GradedSubmission] = {}
    grades: dict[str, SubmissionGrades] = {}
    phases: dict[str, PhaseTimes] = {}
    with RowStore(course) as store:
        for graded in executor.grade_all(template.root, largest_first(tasks)):
            storing, worked = time.monotonic(), graded.phases
            if graded.ok:
                try:
                    # Read back now, while the workers grade the rest, rather than all at the end.
                    grades[graded.student_id] = store.store_and_read_back(graded)
                except GraderFailure as failure:
                    graded = crashed(graded.student_id, failure, graded.worker, course.grader_attempts)
            phases[graded.student_id] = worked.with_phase(Phase.GRADEBOOK, time.monotonic() - storing)
            outcomes[graded.student_id] = graded
            progress.update(graded)
    outcomes = record_internal_errors(outcomes, error_log or course.root / "class-report" / LOG_NAME)
    rows = tuple(_row(outcomes[student], grades.get(student), stamp) for _, student in tasks)
    return CohortResult(rows, time.monotonic() - started, phases)


def build_template(course: Course, root: Path, notebooks: tuple[str, ...]) -> Course:
    """What every worker copies: the assignment's source and a SQLite gradebook that knows its cells.

    A SQLite course gradebook is copied as it is, so workers grade against exactly
    the cells the course gradebook holds, as serial nbgrader would; any other
    database is mirrored by generating the assignment into a fresh SQLite file.
    """
    course_file = sqlite_file(course.db_url)
    if course_file is None:
        return new_workspace(course, root, notebooks)
    template = copy_source(course, root, notebooks)
    shutil.copyfile(course_file, root / "gradebook.db")
    return template


def _ensure_assignment(course: Course) -> None:
    """The course gradebook must know the assignment's cells before grades can be stored."""
    with open_gradebook(course) as gradebook:
        try:
            gradebook.find_assignment(course.assignment_id)
            return
        except MissingEntry:
            pass
    build_release(course)


def _fresh(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    return folder


def _row(graded: GradedSubmission, grades: SubmissionGrades | None, stamp: GradingStamp) -> Outcome:
    """The submission's row: the worker's outcome without what was only there to be stored, with what the gradebook holds."""
    graded_by = stamp if graded.status.has_grades else None
    return dataclasses.replace(graded.as_outcome(), grades=grades, graded_by=graded_by)
