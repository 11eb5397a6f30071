"""The soak: its view of the process tree, its load, its faults, its comparison and its report; then one short soak."""

import datetime
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from gradekit.commands.figures import soak_figure, write_figure
from gradekit.commands.soak import (
    Outcome,
    RowDifference,
    SoakResult,
    SoakSettings,
    differing_rows,
    run_soak,
    soak_lines,
    soak_students,
)
from gradekit.commands.soak_faults import Fault, FaultInjector, FaultKind, FaultPlan, kernel_tmp_folder
from gradekit.commands.soak_load import Load
from gradekit.commands.soak_processes import descendants, grading_tree, is_alive, process_table, read_entry
from gradekit.core.status import Status
from gradekit.grading.gradebook_records import GradeRecord, NotebookRecord, SubmissionRecord

SLEEPER = "import time; time.sleep(60)"
PARENT_OF_A_SLEEPER = (
    f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {SLEEPER!r}]); time.sleep(60)"
)


def _wait_for(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# ---- the process tree ---------------------------------------------------------------------------


@pytest.mark.nbgrader
def test_the_walk_finds_a_child_and_its_grandchild_and_sees_them_end():
    child = subprocess.Popen([sys.executable, "-c", PARENT_OF_A_SLEEPER], start_new_session=True)
    try:
        _wait_for(lambda: any(e.parent == child.pid for e in process_table().values()))
        below = descendants(os.getpid(), process_table())
        grandchild = next(entry for entry in below if entry.parent == child.pid)
        assert [entry.pid for entry in below].index(child.pid) < below.index(grandchild)
        assert is_alive(grandchild)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the child leads a session: this ends both
        child.wait()
    _wait_for(lambda: not is_alive(grandchild))
    assert read_entry(child.pid) is None


def _sleep_in_a_fork():
    time.sleep(60)


@pytest.mark.nbgrader
def test_a_forked_child_is_a_worker_a_started_program_is_not_and_a_spared_one_never():
    forked = multiprocessing.get_context("fork").Process(target=_sleep_in_a_fork)
    forked.start()
    program = subprocess.Popen([sys.executable, "-c", SLEEPER])
    try:
        workers = {entry.pid for entry in grading_tree(os.getpid()).workers}
        assert forked.pid in workers and program.pid not in workers
        assert forked.pid not in {e.pid for e in grading_tree(os.getpid(), frozenset({forked.pid})).workers}
    finally:
        forked.kill()
        program.kill()
        forked.join()
        program.wait()


# ---- the load -----------------------------------------------------------------------------------


@pytest.mark.nbgrader
def test_the_load_runs_its_hogs_and_its_memory_until_it_ends_then_none_is_left():
    with Load(hogs=2, memory_bytes=2**20) as load:
        entries = [read_entry(pid) for pid in load.pids]
        assert len(entries) == 3 and all(entries)
        assert {entry.parent for entry in entries} == {os.getpid()}
    assert all(read_entry(pid) is None for pid in load.pids)


# ---- the faults ---------------------------------------------------------------------------------


@pytest.mark.unit
def test_the_gradebook_is_busy_while_the_injector_holds_it_and_free_after(tmp_path):
    gradebook = tmp_path / "gradebook.db"
    sqlite3.connect(gradebook).execute("CREATE TABLE grade (score REAL)").connection.commit()
    plan = FaultPlan(kinds=(FaultKind.LOCK_GRADEBOOK,), interval_seconds=0, lock_seconds=2)

    def busy() -> bool:
        try:
            with sqlite3.connect(gradebook, timeout=0) as other:
                other.execute("INSERT INTO grade VALUES (1)")
            return False
        except sqlite3.OperationalError as error:
            return "locked" in str(error)

    with FaultInjector(plan, os.getpid(), frozenset(), gradebook, tmp_path) as injector:
        _wait_for(busy, seconds=5)
        _wait_for(lambda: injector.faults)
    assert not busy()
    assert [fault.kind for fault in injector.faults] == [FaultKind.LOCK_GRADEBOOK]


@pytest.mark.unit
def test_a_fault_waits_for_its_share_of_the_cohort_to_be_graded(tmp_path):
    gradebook = tmp_path / "gradebook.db"
    sqlite3.connect(gradebook).close()
    graded = [0.0]
    plan = FaultPlan(kinds=(FaultKind.LOCK_GRADEBOOK,), interval_seconds=0, lock_seconds=0)
    with FaultInjector(plan, os.getpid(), frozenset(), gradebook, tmp_path, lambda: graded[0]) as injector:
        time.sleep(0.5)
        assert injector.faults == []  # one fault of one: it waits until half the cohort is graded
        graded[0] = 0.5
        _wait_for(lambda: injector.faults)
    assert [fault.kind for fault in injector.faults] == [FaultKind.LOCK_GRADEBOOK]


@pytest.mark.unit
def test_the_kernel_folder_to_delete_is_the_one_written_last(tmp_path):
    folders = {
        "old": tmp_path / "gradekit-run-a" / "kit-kernels-b" / "kold",
        "new": tmp_path / "gradekit-run-a" / "kit-kernels-c" / "knew",
        "elsewhere": tmp_path / "kit-kernels-d" / "kother",
        "not-a-kernel": tmp_path / "gradekit-worker-e" / "kx",
    }
    for written, folder in zip((1_000, 2_000, 1_500, 3_000), folders.values()):
        (folder / "mailbox").mkdir(parents=True)
        os.utime(folder / "mailbox", (written, written))
    assert kernel_tmp_folder(tmp_path) == folders["new"]
    assert kernel_tmp_folder(tmp_path / "gradekit-worker-e") is None


# ---- the cohort ---------------------------------------------------------------------------------


@pytest.mark.unit
def test_the_default_cohort_holds_300_notebooks_of_every_kind_and_the_seed_fixes_it(manifest):
    students = soak_students(manifest, 300, seed=0)
    subjects = [subject for student in students for subject in student.subjects]
    assert sum(len(student.notebooks) for student in students) >= 300
    assert {subject.kind for subject in subjects} == {"reference", "blank", "control", "alternative"}
    assert len({student.student_id for student in students}) == len(students)
    assert soak_students(manifest, 300, seed=0) == students


@pytest.mark.unit
def test_a_small_cohort_takes_controls_in_the_order_its_seed_gives(manifest):
    first, second = (soak_students(manifest, 30, seed) for seed in (1, 2))
    assert sum(len(s.notebooks) for s in first) >= 30 and sum(len(s.notebooks) for s in second) >= 30
    assert first != second


# ---- the comparison -----------------------------------------------------------------------------


def _record(student: str, score: float) -> SubmissionRecord:
    grade = GradeRecord("test_leaf", score, None, None, False)
    notebook = NotebookRecord("010_history", False, None, (grade,), ())
    return SubmissionRecord(student, datetime.datetime(2025, 1, 1), (notebook,))


@pytest.mark.unit
def test_rows_differ_by_record_by_status_or_by_being_lost():
    quiet = {s: Outcome(Status.GRADED, _record(s, 1.0)) for s in ("ann", "bob", "cy", "dee")}
    loaded = {
        "ann": Outcome(Status.GRADED, _record("ann", 1.0)),
        "bob": Outcome(Status.GRADED, _record("bob", 0.0)),
        "cy": Outcome(Status.FAILED, None, "the grading worker was lost"),
    }
    differences = differing_rows(quiet, loaded)
    assert [d.student_id for d in differences] == ["bob", "cy", "dee"]
    assert differences[0].what == "the gradebook records differ"
    assert differences[1].what == "graded on a quiet machine, failed under load: the grading worker was lost"
    assert differing_rows(quiet, dict(quiet)) == ()


# ---- the report ---------------------------------------------------------------------------------


def _result(differences=()) -> SoakResult:
    faults = (Fault(FaultKind.KILL_KERNEL, "kernel 41", 3.0), Fault(FaultKind.KILL_WORKER, "worker 7", 9.5))
    return SoakResult(
        students=40,
        notebooks=301,
        notebook_kinds={"reference": 66, "blank": 66, "control": 129, "alternative": 40},
        jobs=2,
        hogs=8,
        memory_bytes=512 * 2**20,
        quiet_seconds=240.0,
        loaded_seconds=600.0,
        faults=faults,
        differences=tuple(differences),
        retries=0,
        grader_errors=1,
        load_pids=(11, 12),
        leftovers=(),
    )


@pytest.mark.unit
def test_the_report_names_the_cohort_each_fault_and_the_differing_rows():
    lost = Outcome(Status.FAILED, None, "the grading worker was lost")
    lines = soak_lines(_result([RowDifference("bob", Outcome(Status.GRADED, None), lost)]))
    assert lines[0].startswith("cohort: 40 submissions, 301 notebooks (40 alternative, 66 blank, 129 control")
    assert "      3.0 s  killed a kernel: kernel 41" in lines
    assert "faults injected: 2 of 2 kinds" in lines
    assert "DIFFERS bob: graded on a quiet machine, failed under load: the grading worker was lost" in lines
    assert lines[-1] == "soak FAILS: 1 of 40 rows differ from the quiet run"
    assert soak_lines(_result())[-1] == "soak holds: 0 of 40 rows differ from the quiet run"


@pytest.mark.unit
def test_the_figure_names_its_command_then_the_runs_the_faults_and_the_verdict(tmp_path):
    path = tmp_path / "soak.md"
    write_figure(path, "soak", soak_figure(_result()))
    text = path.read_text()
    assert text.splitlines()[0] == f"<!-- written by: python -m gradekit soak --figures {path.as_posix()} -->"
    assert "| loaded run | 10.0 min | 8 CPU hogs, 512 MB held, 2 faults |" in text
    assert "| 10 s | killed a worker | worker 7 |" in text
    assert "| 2 | 0 | 1 | 0 of 40 |" in text


# ---- one short soak -----------------------------------------------------------------------------


@pytest.mark.nbgrader
def test_a_short_soak_grades_twice_injects_its_faults_and_leaves_no_process_behind(course, manifest):
    # Paced by time alone: a cohort this small may be graded before any share of it could be waited for.
    kinds = (FaultKind.KILL_KERNEL, FaultKind.STOP_WORKER)
    plan = FaultPlan(kinds=kinds, interval_seconds=1, stop_seconds=2, spread=0)
    settings = SoakSettings(jobs=2, notebooks=5, hogs_per_core=1, memory_bytes=64 * 2**20, faults=plan)
    # Other tests of this session may keep processes of their own below this one (a cluster, a zygote).
    before = {entry.pid for entry in descendants(os.getpid(), process_table())}
    result = run_soak(course, manifest.only(["010_history"]), settings)

    assert result.notebooks >= 5 and result.quiet_seconds > 0 and result.loaded_seconds > 0
    assert [fault.kind for fault in result.faults] == list(plan.kinds)
    killed = result.faults[0].target
    assert killed.startswith("kernel ") and read_entry(int(killed.split()[1])) is None
    assert len(result.load_pids) == result.hogs + 1 and all(read_entry(pid) is None for pid in result.load_pids)
    assert not [entry for entry in descendants(os.getpid(), process_table()) if entry.pid not in before]
    # The killed kernel's notebook is graded again on a fresh kernel: no row differs from the quiet run.
    assert result.differing == 0 == len(result.differences), result.differences
    assert soak_lines(result)[-1].startswith(f"soak {'holds' if result.ok else 'FAILS'}: {result.differing} of ")
