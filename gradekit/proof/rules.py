"""The grading proof: real autograding of the reference, the blank stubs and every negative control.

Rules checked on the gradebook and the graded notebooks:
- the reference earns full marks on every test cell of the manifest;
- the blank stubs are graded without a crash and earn zero everywhere;
- a negative control loses points on each cell it declares, names its
  misconception there, and keeps full marks on the other cells of its notebook.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from gradekit.catalog import load_catalog
from gradekit.authoring.consistency import catalog_problems, notebook_problems
from gradekit.course import Course
from gradekit.grading.gradebook import SubmissionGrades
from gradekit.proof.shards import grade_subjects
from gradekit.manifest import Manifest
from gradekit.authoring.solutions import load_controls
from gradekit.proof.subjects import BLANK_ID, REFERENCE_ID, Subject, proof_subjects
from gradekit.authoring.release import new_workspace


@dataclasses.dataclass(frozen=True)
class Violation:
    student_id: str
    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.student_id} @ {self.where}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class ProofResult:
    workspace: Course
    subjects: tuple[Subject, ...]
    grades: dict[str, SubmissionGrades]
    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations


def run_proof(course: Course, manifest: Manifest, root: Path, jobs: int, complete: bool = True) -> ProofResult:
    """Build the release and the synthetic cohort in `root`, autograde it, and check every rule.

    `complete` is False when `manifest` was narrowed to some notebooks: source
    notebooks outside it are then not reported as unlisted.
    """
    static = _static_violations(course, manifest, complete)
    workspace = new_workspace(course, root, tuple(entry.name for entry in manifest.notebooks))
    subjects = proof_subjects(manifest, load_controls(manifest))
    runs, grades = grade_subjects(workspace, manifest, subjects, jobs)
    violations = list(static)
    violations += [Violation("nbgrader", "autograde", run.error) for run in runs if run.error]
    for subject in subjects:
        violations += check_subject(manifest, subject, grades[subject.student_id])
    return ProofResult(workspace, subjects, grades, tuple(violations))


def _static_violations(course: Course, manifest: Manifest, complete: bool) -> list[Violation]:
    problems = notebook_problems(manifest, course.source_dir, complete)
    problems += catalog_problems(manifest, load_catalog(), load_controls(manifest), course.source_dir)
    return [Violation("manifest", "static", p) for p in problems]


def check_subject(manifest: Manifest, subject: Subject, grades: SubmissionGrades) -> list[Violation]:
    if grades.missing:
        return [Violation(subject.student_id, "gradebook", "no graded submission was recorded")]
    if subject.student_id == REFERENCE_ID:
        return _check_every_cell(manifest, subject, grades, lambda g: g.full, "the reference must earn full marks")
    if subject.student_id == BLANK_ID:
        return _check_every_cell(manifest, subject, grades, lambda g: g.zero, "blank stubs must earn zero")
    return _check_control(manifest, subject, grades)


def _check_every_cell(manifest, subject, grades, rule, reason) -> list[Violation]:
    violations = []
    for notebook in subject.notebooks:
        for test in manifest.test_cells_of(notebook):
            grade = grades.cell(notebook, test.cell)
            where = f"{notebook}/{test.cell}"
            if grade is None:
                violations.append(Violation(subject.student_id, where, "not graded"))
            elif grade.max_score != test.points:
                violations.append(Violation(subject.student_id, where, f"worth {grade.max_score}, manifest says {test.points}"))
            elif not rule(grade):
                violations.append(Violation(subject.student_id, where, f"{reason}, got {grade.score}/{grade.max_score}"))
    return violations


def _check_control(manifest, subject, grades) -> list[Violation]:
    control = subject.control
    violations = []
    for test in manifest.test_cells_of(control.notebook):
        grade = grades.cell(control.notebook, test.cell)
        where = f"{control.notebook}/{test.cell}"
        if grade is None:
            violations.append(Violation(subject.student_id, where, "not graded"))
        elif test.cell in control.fails:
            if grade.full:
                violations.append(Violation(subject.student_id, where, f"must lose points for {control.misconception}, got full marks"))
            if control.misconception not in grade.diagnosed:
                named = ", ".join(grade.diagnosed) or "nothing"
                violations.append(Violation(subject.student_id, where, f"must name {control.misconception}, named {named}"))
        elif not grade.full:
            violations.append(Violation(subject.student_id, where, f"lost points outside its declared cells ({grade.score}/{grade.max_score})"))
    return violations
