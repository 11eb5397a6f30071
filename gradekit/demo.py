"""`make demo`: the main job on the embedded defaults (SQLite gradebook, local course directory).

Builds the release, submits a small cohort of pseudo students (the reference,
the blank stubs and every negative control), autogrades it with nbgrader,
exports grades.csv, generates feedback and prints who scored what and which
misconceptions their feedback names.
"""
from __future__ import annotations

import time

from gradekit.catalog import load_catalog
from gradekit.course import Course
from gradekit.grading import grade_subjects
from gradekit.manifest import Manifest
from gradekit.nbgrader_cli import run_nbgrader
from gradekit.report import student_table
from gradekit.solutions import load_controls
from gradekit.submissions import proof_subjects
from gradekit.workspace import build_release


def run_demo(course: Course, manifest: Manifest) -> int:
    started = time.monotonic()
    build_release(course)
    print(f"release built: {course.release_dir}")
    subjects = proof_subjects(manifest, load_controls(manifest))
    # One workspace: the course's own gradebook must hold every student.
    runs, grades = grade_subjects(course, manifest, subjects, jobs=1)
    statuses = {s.student_id: ("grading failed" if run.error else "graded") for run in runs for s in run.subjects}
    run_nbgrader(course, "generate_feedback", course.assignment_id, "--force")
    grades_csv = course.root / "grades.csv"
    run_nbgrader(course, "export", f"--to={grades_csv}")
    ordered = [grades[s] for s in sorted(grades)]
    print(student_table(ordered, load_catalog(), statuses))
    print(f"\n{len(ordered)} submissions graded in {time.monotonic() - started:.0f} s")
    print(f"grades:   {grades_csv}")
    print(f"feedback: {course.feedback_dir}/<student>/{course.assignment_id}/")
    print(f"graded:   {course.autograded_dir}/<student>/{course.assignment_id}/")
    return 0 if all(run.error is None for run in runs) else 1
