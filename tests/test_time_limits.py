"""Time limits that load cannot fake: the kernel's CPU time decides, the wall clock only backs it up."""

import contextlib
import dataclasses
import io
import os
import signal
import subprocess
import sys

import pytest
from submission_cases import CELL_TIMEOUT, CHAIN_TEST, NOTEBOOKS, Builder, Case, Expected, build_case, full_marks

from gradekit.authoring.release import new_workspace
from gradekit.core.notes import NoteKind, texts
from gradekit.core.status import Status
from gradekit.grading.cohort import grade_cohort, submitted_students
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.progress import Progress

HOGS_PER_CORE = 4
# About 1.5 s of the kernel's CPU, run once: in the answer cell (an ordinary cell) and in the
# first call of chain_gradients (a sealed test's call into the kernel); within the limit in CPU,
# however long a loaded machine makes it take on the wall clock.
BUSY = "import time\n_end = time.process_time() + 1.5\nwhile time.process_time() < _end:\n    pass\n"
BUSY_ONCE = "if not globals().get('_busy_done'):\n    globals()['_busy_done'] = True\n" + "".join(
    f"    {line}\n" for line in BUSY.splitlines()
)


@contextlib.contextmanager
def cpu_hogs(own_sessions: bool):
    """HOGS_PER_CORE spinning processes per core, stopped whatever happens.

    Each hog in a session of its own weighs on the scheduler as a separate
    user would (the kernel's scheduler shares CPU between sessions first);
    in one shared session they load the machine without starving anyone.
    """
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=own_sessions)
        for _ in range(HOGS_PER_CORE * (os.cpu_count() or 1))
    ]
    try:
        yield hogs
    finally:
        for hog in hogs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(hog.pid, signal.SIGKILL)
            hog.wait()


def _busy(b: Builder) -> None:
    b.cell("answer_chain_gradients").source = BUSY + "\n" + b.cell("answer_chain_gradients").source
    b.wrap_chain(BUSY_ONCE)


SPINS = Case(
    "spins-past-the-limit",
    lambda b: b.wrap_chain("while True:\n    pass"),
    Expected(
        Status.GRADED,
        frozenset({CHAIN_TEST}),
        (f"test_chain_gradients ran past the {CELL_TIMEOUT} s limit and was interrupted",),
    ),
)
BUSY_WITHIN = Case("busy-within-the-limit", _busy, Expected(Status.GRADED))


def _graded(course, manifest, tmp_path_factory, case: Case, hogs: bool):
    """`case` graded alone with the short cell limit, on a machine loaded by CPU hogs if `hogs`."""
    narrow = manifest.only(list(NOTEBOOKS))
    scratch = new_workspace(course, tmp_path_factory.mktemp(case.name), NOTEBOOKS)
    scratch = dataclasses.replace(scratch, exchange_root=tmp_path_factory.mktemp("exchange"))
    build_case(scratch, narrow, case)
    progress = Progress(len(submitted_students(scratch)), io.StringIO())
    with cpu_hogs(own_sessions=False) if hogs else contextlib.nullcontext([]) as running:
        result = grade_cohort(scratch, LocalExecutor(1), NOTEBOOKS, progress, cell_timeout=CELL_TIMEOUT)
        assert all(hog.poll() is None for hog in running)  # the load lasted the whole grading
    return narrow, {row.student_id: row for row in result.rows}


# The spinner is graded on an otherwise quiet machine: under heavy load its kernel may not reach
# the limit in CPU before the backstop, and then it is rightly the grader's failure, not a timeout.
@pytest.fixture(scope="module")
def graded_spinner(course, manifest, tmp_path_factory):
    return _graded(course, manifest, tmp_path_factory, SPINS, hogs=False)


@pytest.fixture(scope="module")
def graded_under_load(course, manifest, tmp_path_factory):
    return _graded(course, manifest, tmp_path_factory, BUSY_WITHIN, hogs=True)


def _assert_outcome(narrow, rows, case: Case) -> None:
    row, expected = rows[case.name], case.expected
    said = "\n".join((row.message, *texts(row.notes), *texts(row.findings)))
    assert row.status is expected.status, said
    for fragment in expected.says:
        assert fragment in said
    scores = {f"{cell.notebook}/{cell.cell}": cell.score for cell in row.grades.cells}
    assert scores == {cell: 0 if cell in expected.zero_cells else full for cell, full in full_marks(narrow).items()}


@pytest.mark.alone  # graded on a quiet machine (above)
@pytest.mark.nbgrader
def test_a_cell_that_spins_past_the_limit_is_the_students_timeout(graded_spinner):
    narrow, rows = graded_spinner
    _assert_outcome(narrow, rows, SPINS)
    assert [note.kind for note in rows[SPINS.name].notes] == [NoteKind.INTERRUPTED]


@pytest.mark.alone  # it loads every core on purpose
@pytest.mark.nbgrader
def test_a_cell_within_its_cpu_limit_is_graded_in_full_on_a_loaded_machine(graded_under_load):
    narrow, rows = graded_under_load
    _assert_outcome(narrow, rows, BUSY_WITHIN)
    assert not rows[BUSY_WITHIN.name].notes and not rows[BUSY_WITHIN.name].findings
