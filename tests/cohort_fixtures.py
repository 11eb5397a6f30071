"""Synthetic cohorts for the grading tests: scratch courses holding proof subjects as students."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import nbformat

from gradekit.authoring.release import clone_workspace, new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.core.course import REPO_ROOT, Course
from gradekit.core.manifest import Manifest
from gradekit.grading.cohort import grade_cohort, submitted_students
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.intake import stamp
from gradekit.grading.progress import Progress
from gradekit.proof.subjects import answer_sources, fill_answers, proof_subjects, write_submission

MALFORMED_STUDENT = "broken-json"
CRASHING_STUDENT = "kills-its-kernel"
SMALL_COHORT_NOTEBOOK = "010_history"
# Answers that reach for the reference solutions instead of computing anything.
CHEATS = {
    "cheat-plain-import": "from solutions.reference.history import float64_leaf",
    "cheat-path-edit": f"import sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\nfrom solutions.reference.history import float64_leaf",
}


def cohort_course(course: Course, manifest: Manifest, root: Path, controls: int = 3) -> Course:
    """A course with the manifest's notebooks released; the reference, the blank stubs and the first `controls` controls submit."""
    scratch = new_workspace(course, root, tuple(entry.name for entry in manifest.notebooks))
    subjects = proof_subjects(manifest, load_controls(manifest))
    for subject in subjects[: 2 + controls]:
        write_submission(scratch, scratch.release_dir, manifest, subject)
    return scratch


def add_malformed_submission(course: Course, notebook: str) -> None:
    folder = course.submitted_dir / MALFORMED_STUDENT / course.assignment_id
    folder.mkdir(parents=True)
    (folder / f"{notebook}.ipynb").write_text('{"cells": [ this is not json')


def add_kernel_killing_submission(course: Course, manifest: Manifest, notebook: str) -> None:
    """A submission whose first answer cell ends its kernel process outright."""
    add_first_answer(course, manifest, notebook, CRASHING_STUDENT, "import os\nos._exit(1)")


def add_first_answer(course: Course, manifest: Manifest, notebook: str, student: str, answer: str) -> None:
    """A submission of the reference, except that the notebook's first answer cell holds `answer`."""
    sources = answer_sources(manifest, notebook, None)
    sources[manifest.exercises_of(notebook)[0].answer_cell] = answer
    folder = course.submitted_dir / student / course.assignment_id
    folder.mkdir(parents=True)
    nbformat.write(fill_answers(course.release_dir / f"{notebook}.ipynb", sources), folder / f"{notebook}.ipynb")
    stamp(folder)


def twin_course(course: Course, root: Path, skip: set[str]) -> Course:
    """The same course and submissions (minus `skip`), to grade a second way and compare."""
    twin = clone_workspace(course, root)
    for folder in sorted(course.submitted_dir.iterdir()):
        if folder.name not in skip:
            shutil.copytree(folder, twin.submitted_dir / folder.name)
    return twin


def small_cohort(course: Course, manifest: Manifest, root: Path):
    """One notebook, graded in parallel: the reference, the blank stubs, three controls, a malformed
    submission, one that kills its kernel and the two cheats. Returns the course, the result and
    the progress lines."""
    narrow = manifest.only([SMALL_COHORT_NOTEBOOK])
    scratch = cohort_course(course, narrow, root)
    add_malformed_submission(scratch, SMALL_COHORT_NOTEBOOK)
    add_kernel_killing_submission(scratch, narrow, SMALL_COHORT_NOTEBOOK)
    for student, cheat in CHEATS.items():
        add_first_answer(scratch, narrow, SMALL_COHORT_NOTEBOOK, student, cheat)
    stream = io.StringIO()
    progress = Progress(len(submitted_students(scratch)), stream)
    result = grade_cohort(scratch, LocalExecutor(2), (SMALL_COHORT_NOTEBOOK,), progress)
    return scratch, result, stream.getvalue()
