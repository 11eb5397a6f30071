"""Throughput of cohort grading: plain serial `nbgrader autograde` against `gradekit grade`, side by side.

Both grade the same synthetic cohort in twin course directories; the script
checks that the two gradebooks hold identical grades and prints submissions
per minute for each, their ratio, and the per-notebook floor (the time to run
a notebook's cells in an already started kernel). With `phases`, the kit's
feedback pages are made too, and the engine's time is broken down by phase
(benchmark_phases.py).
"""

from __future__ import annotations

import dataclasses
import io
import logging
import shutil
import tempfile
import time
from pathlib import Path

from nbclient import NotebookClient
from traitlets.config import Config

from gradekit.authoring.release import clone_workspace, new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.commands.benchmark_phases import PhaseTable, phase_lines
from gradekit.commands.ta_pipeline import generate_feedback
from gradekit.core.course import Course
from gradekit.core.manifest import Manifest
from gradekit.core.nbgrader_cli import grading_environment, run_nbgrader
from gradekit.grading.cohort import CohortResult, grade_cohort, submitted_students
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.feedback_mathjax import bundle_mathjax
from gradekit.grading.gradebook_records import read_record
from gradekit.grading.phase_clock import Phase, PhaseTimes
from gradekit.grading.progress import Progress
from gradekit.proof.subjects import (
    Subject,
    answer_sources,
    fill_answers,
    first_controls,
    proof_subjects,
    write_submission,
)

logger = logging.getLogger(__name__)


def benchmark_subjects(manifest: Manifest, controls_per_notebook: int) -> tuple[Subject, ...]:
    """The reference and the blank stubs (every notebook) plus the first controls of each notebook."""
    return first_controls(proof_subjects(manifest, load_controls(manifest)), controls_per_notebook)


@dataclasses.dataclass(frozen=True)
class BenchmarkResult:
    """Both gradings of one synthetic cohort, measured side by side in one run."""

    submissions: int
    notebooks: int
    jobs: int
    serial_seconds: float
    our_seconds: float
    identical: bool
    floors: dict[str, float]  # notebook -> seconds to run its cells in a started kernel
    phases: PhaseTable | None = None  # where the engine's time went, when asked for

    @property
    def serial_rate(self) -> float:
        return self.submissions / self.serial_seconds * 60

    @property
    def our_rate(self) -> float:
        return self.submissions / self.our_seconds * 60

    @property
    def speed_up(self) -> float:
        return self.our_rate / self.serial_rate


def run_benchmark(
    course: Course, manifest: Manifest, jobs: int, controls_per_notebook: int, phases: bool = False
) -> BenchmarkResult:
    notebooks = tuple(entry.name for entry in manifest.notebooks)
    with tempfile.TemporaryDirectory(prefix="gradekit-bench-") as scratch:
        serial = new_workspace(course, Path(scratch) / "serial", notebooks)
        subjects = benchmark_subjects(manifest, controls_per_notebook)
        for subject in subjects:
            write_submission(serial, serial.release_dir, manifest, subject)
        ours = clone_workspace(serial, Path(scratch) / "ours")
        shutil.copytree(serial.submitted_dir, ours.submitted_dir)
        count = len(subjects)
        executions = sum(len(s.notebooks) for s in subjects)
        logger.info("cohort: %d submissions, %d notebooks, %d workers", count, executions, jobs)

        started = time.monotonic()
        run_nbgrader(serial, "autograde", serial.assignment_id, "--force")
        serial_seconds = time.monotonic() - started
        started = time.monotonic()
        result = grade_cohort(ours, LocalExecutor(jobs), notebooks, Progress(count, io.StringIO()))
        our_seconds = time.monotonic() - started

        students = [student for _, student in submitted_students(serial)]
        identical = not result.failed and all(read_record(serial, s) == read_record(ours, s) for s in students)
        floors = notebook_floors(serial, manifest)
        table = PhaseTable.of(_with_feedback(ours, result), executions, floors) if phases else None
    return BenchmarkResult(count, executions, jobs, serial_seconds, our_seconds, identical, floors, table)


def _with_feedback(course: Course, result: CohortResult) -> list[PhaseTimes]:
    """Each submission's phases, and the feedback pages of the whole cohort (one nbgrader run, as a TA's is)."""
    started = time.monotonic()
    generate_feedback(course, 1)  # one process: its wall time is its worker-seconds
    bundle_mathjax(course.feedback_dir)
    return [*result.phases.values(), PhaseTimes({Phase.FEEDBACK: time.monotonic() - started})]


def benchmark_lines(result: BenchmarkResult) -> list[str]:
    """What the command prints: both rates, their ratio, and the per-notebook floor."""
    lines = [
        f"cohort: {result.submissions} submissions, {result.notebooks} notebooks, {result.jobs} workers",
        f"serial nbgrader autograde: {result.serial_seconds:6.1f} s  {result.serial_rate:6.1f} submissions/min",
        f"gradekit grade:            {result.our_seconds:6.1f} s  {result.our_rate:6.1f} submissions/min",
        f"speed-up: {result.speed_up:.2f}x   identical grades: {'yes' if result.identical else 'NO'}",
        "per-notebook floor (cells only, reference answers, kernel already started):",
    ]
    lines += [f"  {name:<20} {seconds:5.2f} s" for name, seconds in result.floors.items()]
    lines += [f"  {'total':<20} {sum(result.floors.values()):5.2f} s"]
    return lines + phase_lines(result.phases) if result.phases else lines


def notebook_floors(course: Course, manifest: Manifest) -> dict[str, float]:
    """Seconds to execute each reference-filled notebook's cells, kernel start excluded."""
    floors = {}
    folder = course.root / "floor"
    shutil.copytree(course.source_dir, folder, ignore=shutil.ignore_patterns("*.ipynb"))
    kernel_settings = course_kernel_settings(course)
    for entry in manifest.notebooks:
        notebook = fill_answers(course.release_dir / f"{entry.name}.ipynb", answer_sources(manifest, entry.name, None))
        client = NotebookClient(
            notebook,
            timeout=course.cell_timeout,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(folder)}},
            config=kernel_settings,
        )
        with client.setup_kernel(env=grading_environment()):
            started = time.monotonic()
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
            floors[entry.name] = time.monotonic() - started
    return floors


def course_kernel_settings(course: Course) -> Config:
    """The course's kernel manager settings, so a floor kernel starts as nbgrader's do."""
    return Config({"KernelManager": course.nbgrader_config.KernelManager})
