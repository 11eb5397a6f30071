"""`make demo`: the main job on the embedded defaults (SQLite gradebook, local worker processes).

Sets up a demo course directory from the committed source (its own gradebook,
wiped on every run, so a real course's gradebook is never touched), submits a
small, telling cohort of pseudo students (the reference, the blank stubs and
the first listed negative control of each notebook; with `full`, every
control), then runs the TA's pipeline on it: parallel autograding with
progress, feedback, grades.csv, the class report and a table of who scored
what and which misconceptions their feedback names.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gradekit.authoring.release import new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.commands.digits import NOTEBOOK, train_on_digits
from gradekit.commands.ta_pipeline import grade_and_report
from gradekit.core.course import Course
from gradekit.core.manifest import Manifest
from gradekit.grading.executors import LocalExecutor, default_jobs
from gradekit.proof.subjects import Subject, first_controls, proof_subjects, write_submission


def demo_course(course: Course, manifest: Manifest, root: Path) -> Course:
    """A fresh course directory at `root` with the release of the manifest's notebooks built."""
    if root.exists():
        shutil.rmtree(root)
    return new_workspace(course, root, tuple(entry.name for entry in manifest.notebooks))


def demo_subjects(manifest: Manifest, full: bool = False) -> tuple[Subject, ...]:
    """The reference, the blank stubs and the first listed control of each notebook (every control when `full`)."""
    subjects = proof_subjects(manifest, load_controls(manifest))
    return subjects if full else first_controls(subjects, per_notebook=1)


def run_demo(demo: Course, manifest: Manifest, jobs: int | None = None, full: bool = False) -> int:
    print(f"demo course: {demo.root} (release built in {demo.release_dir})")
    subjects = demo_subjects(manifest, full)
    for subject in subjects:
        write_submission(demo, demo.release_dir, manifest, subject)
    controls = sum(1 for subject in subjects if subject.control)
    print(
        f"{len(subjects)} pseudo students: the reference, the blank stubs and {controls} negative controls"
        + ("" if full else " (the first of each notebook; --full grades every control)")
    )
    print(
        "(each control-* student submits only the notebook its control rewrites; nbgrader scores missing notebooks zero)"
    )
    result = grade_and_report(demo, manifest, LocalExecutor(jobs or default_jobs()))
    if any(entry.name == NOTEBOOK for entry in manifest.notebooks):
        loss, accuracy, seconds = train_on_digits(demo, manifest)
        print(
            f"raw-tensor MLP (reference) on the local MNIST digits: test accuracy {accuracy:.3f}, loss {loss:.4f} ({seconds:.1f} s)"
        )
    return 0 if not result.failed else 1
