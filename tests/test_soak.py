"""The soak: its cohort, its comparison and its report; then one short soak (its process tree, load and faults
have test modules of their own)."""

import datetime
import os

import pytest

from gradekit.commands.figures import soak_figure, write_figure
from gradekit.commands.soak import (
    ComparedRow,
    RowDifference,
    SoakResult,
    SoakSettings,
    differing_rows,
    run_soak,
    soak_lines,
    soak_students,
)
from gradekit.commands.soak_faults import Fault, FaultKind, FaultPlan
from gradekit.commands.soak_processes import descendants, process_table, read_entry
from gradekit.core.status import Status
from gradekit.grading.gradebook_records import GradeRecord, NotebookRecord, SubmissionRecord

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
    quiet = {s: ComparedRow(Status.GRADED, _record(s, 1.0)) for s in ("ann", "bob", "cy", "dee")}
    loaded = {
        "ann": ComparedRow(Status.GRADED, _record("ann", 1.0)),
        "bob": ComparedRow(Status.GRADED, _record("bob", 0.0)),
        "cy": ComparedRow(Status.FAILED, None, "the grading worker was lost"),
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
    lost = ComparedRow(Status.FAILED, None, "the grading worker was lost")
    lines = soak_lines(_result([RowDifference("bob", ComparedRow(Status.GRADED, None), lost)]))
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


@pytest.mark.alone  # it loads every core on purpose
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
