"""A submission that sleeps holds its grading process for its idle allowance, not for its cells' backstops."""

import dataclasses
import io
import time

import nbformat
import pytest
from submission_cases import CELL_TIMEOUT, HONEST, NOTEBOOKS, TARGET, Builder, Case, Expected, build_case

from gradekit.authoring.release import new_workspace
from gradekit.core.failures import GraderCause
from gradekit.core.notes import NoteKind, texts
from gradekit.core.status import Status
from gradekit.grading.cohort import grade_cohort, submitted_students
from gradekit.grading.cpu_clock import BACKSTOP_FACTOR
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.idle_allowance import TASK_IDLE_FACTOR, IdleAllowance
from gradekit.grading.progress import Progress

IDLE_SECONDS = 2.0  # per notebook: the three case notebooks may sit idle 6 s in all
# Just under each cell's wall-clock backstop: no cell would ever be ended for it.
NAP = BACKSTOP_FACTOR * CELL_TIMEOUT - 1
SHORT_NAP = 0.2  # shorter than a cell clock's first reading: only the task's own clock sees it
SHORT_NAPS = 300  # a minute of idle time in all, ten times the task's allowance


def _naps_in_every_answer_cell(b: Builder) -> None:
    for notebook in b.notebooks.values():
        for cell in notebook.cells:
            if cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                cell.source = f"import time\ntime.sleep({NAP})\n" + cell.source


def _many_short_naps(b: Builder) -> None:
    naps = [nbformat.v4.new_code_cell(f"import time\ntime.sleep({SHORT_NAP})") for _ in range(SHORT_NAPS)]
    b.notebooks[TARGET].cells[1:1] = naps


NAPS = Case("naps-in-every-answer-cell", _naps_in_every_answer_cell, Expected(Status.GRADED))
SHORT = Case("many-short-naps", _many_short_naps, Expected(Status.GRADER_ERROR))
HONEST_CASE = Case(HONEST, lambda b: None, Expected(Status.GRADED))


@pytest.fixture(scope="module")
def graded(course, manifest, tmp_path_factory):
    """The three students graded with a small idle allowance and the short cell limit."""
    scratch = new_workspace(course, tmp_path_factory.mktemp("idle"), NOTEBOOKS)
    exchange = tmp_path_factory.mktemp("exchange")
    # Two tries: a task idle past its own allowance is tried again, as the grader's failure.
    scratch = dataclasses.replace(scratch, exchange_root=exchange, idle_seconds=IDLE_SECONDS, grader_attempts=2)
    narrow = manifest.only(list(NOTEBOOKS))
    for case in (NAPS, SHORT, HONEST_CASE):
        build_case(scratch, narrow, case)
    progress = Progress(len(submitted_students(scratch)), io.StringIO())
    started = time.monotonic()
    result = grade_cohort(scratch, LocalExecutor(2), NOTEBOOKS, progress, cell_timeout=CELL_TIMEOUT)
    return narrow, {row.student_id: row for row in result.rows}, time.monotonic() - started


def _naps(row) -> int:
    return sum(1 for note in row.notes if note.kind is NoteKind.IDLE_SPENT for _ in note.items)


@pytest.mark.nbgrader
def test_sleeping_cells_are_interrupted_once_the_submissions_idle_allowance_is_spent(graded, course, manifest):
    narrow, rows, seconds = graded
    row = rows[NAPS.name]
    said = "\n".join((row.message, *texts(row.notes)))
    assert row.status is Status.GRADED, said
    sleepers = sum(
        1
        for name in NOTEBOOKS
        for cell in nbformat.read(course.release_dir / f"{name}.ipynb", as_version=4).cells
        if cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    )
    # Every sleeping cell after the allowance is interrupted, not run to its backstop, and said so.
    assert _naps(row) >= sleepers - 1, said
    assert f"after the submission's {IDLE_SECONDS * len(NOTEBOOKS):g} s of idle time were spent" in said
    # Without the allowance this student's cells alone would have slept NAP seconds each.
    assert seconds < sleepers * NAP, f"the cohort took {seconds:.0f} s; {sleepers} cells of {NAP} s"
    full = sum(test.points for name in NOTEBOOKS for test in narrow.test_cells_of(name))
    assert sum(cell.score for cell in row.grades.cells) < full  # the answers the interrupts cut short score nothing


@pytest.mark.nbgrader
def test_sleep_too_short_for_any_cells_clock_ends_the_task_at_its_own_idle_allowance(graded):
    _, rows, _ = graded
    row = rows[SHORT.name]
    # The task's clock reads the grader too: whose wait it was it cannot tell, so it tries again, never scores.
    assert row.status is Status.GRADER_ERROR and row.cause is GraderCause.STALLED, row.message
    allowance = TASK_IDLE_FACTOR * IDLE_SECONDS * len(NOTEBOOKS)
    assert f"past its {allowance:g} s idle allowance" in row.message and "tried 2 times" in row.message


@pytest.mark.nbgrader
def test_an_honest_student_spends_nothing_of_a_small_allowance(graded):
    _, rows, _ = graded
    row = rows[HONEST]
    assert row.status is Status.GRADED and not row.notes, "\n".join((row.message, *texts(row.notes)))


@pytest.mark.unit
def test_the_allowance_counts_only_idle_seconds_and_says_when_it_is_spent():
    allowance = IdleAllowance(3.0)
    allowance.charge(2.0)
    allowance.charge(-5.0)  # busier than the wall clock: nothing to bank
    assert allowance.spent == 2.0 and not allowance.spent_out
    allowance.charge(1.5)
    assert allowance.spent_out and allowance.describe() == "sat idle 3.5 s in all, past its 3 s idle allowance"
