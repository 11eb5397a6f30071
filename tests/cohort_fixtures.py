"""Synthetic cohorts for the grading tests: scratch courses holding proof subjects as students."""
from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

from gradekit.course import Course
from gradekit.manifest import Manifest
from gradekit.authoring.solutions import load_controls
from gradekit.proof.subjects import proof_subjects, write_submission
from gradekit.authoring.release import clone_workspace, new_workspace

MALFORMED_STUDENT = "broken-json"
CRASHING_STUDENT = "kills-its-kernel"


def cohort_course(course: Course, manifest: Manifest, root: Path) -> Course:
    """A course with the manifest's notebooks released and one submission per proof subject."""
    scratch = new_workspace(course, root, tuple(entry.name for entry in manifest.notebooks))
    for subject in proof_subjects(manifest, load_controls(manifest)):
        write_submission(scratch, scratch.release_dir, manifest, subject)
    return scratch


def add_malformed_submission(course: Course, notebook: str) -> None:
    folder = course.submitted_dir / MALFORMED_STUDENT / course.assignment_id
    folder.mkdir(parents=True)
    (folder / f"{notebook}.ipynb").write_text('{"cells": [ this is not json')


def add_kernel_killing_submission(course: Course, manifest: Manifest, notebook: str) -> None:
    """A submission whose first answer cell ends its kernel process outright."""
    from gradekit.proof.subjects import answer_sources, fill_answers

    sources = answer_sources(manifest, notebook, None)
    first = manifest.exercises_of(notebook)[0].answer_cell
    sources[first] = "import os\nos._exit(1)"
    folder = course.submitted_dir / CRASHING_STUDENT / course.assignment_id
    folder.mkdir(parents=True)
    nbformat.write(fill_answers(course.release_dir / f"{notebook}.ipynb", sources), folder / f"{notebook}.ipynb")


def twin_course(course: Course, root: Path, skip: set[str]) -> Course:
    """The same course and submissions (minus `skip`), to grade a second way and compare."""
    twin = clone_workspace(course, root)
    for folder in sorted(course.submitted_dir.iterdir()):
        if folder.name not in skip:
            shutil.copytree(folder, twin.submitted_dir / folder.name)
    return twin
