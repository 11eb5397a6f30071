"""The grading proof: the reference, the blank stubs and every negative control, graded by the TA's engine.

The synthetic cohort is graded exactly as `gradekit grade` grades a class
(guarded warm kernels, intake, parallel workers), then these rules are checked
on the gradebook and the graded notebooks:
- every submission is graded: a flagged or failed row is a violation;
- the reference earns full marks on every test cell of the manifest;
- the blank stubs are graded without a crash and earn zero everywhere;
- a negative control loses points on each cell it declares, names its
  misconception there, and keeps full marks on the other cells of its notebook.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import TextIO

from gradekit.authoring.consistency import static_problems
from gradekit.authoring.release import new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.core.course import Course
from gradekit.core.grades import SubmissionGrades
from gradekit.core.manifest import Manifest
from gradekit.core.outcome import Outcome
from gradekit.grading.cohort import CohortResult, grade_cohort
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.progress import Progress
from gradekit.proof.packing import SyntheticStudent, pack_subjects, subject_grades
from gradekit.proof.subjects import BLANK_ID, REFERENCE_ID, Subject, proof_subjects, write_student


@dataclasses.dataclass(frozen=True)
class Violation:
    student_id: str
    where: str
    reason: str
    said: str = ""  # what the test cell itself said when it failed: the reason behind the reason

    def __str__(self) -> str:
        shown = f"{self.student_id} @ {self.where}: {self.reason}"
        return f"{shown}\n    the cell said: {self.said}" if self.said else shown


@dataclasses.dataclass(frozen=True)
class ProofResult:
    workspace: Course
    subjects: tuple[Subject, ...]
    grades: dict[str, SubmissionGrades]  # by subject: the grades of its own notebooks
    violations: tuple[Violation, ...]
    students: tuple[SyntheticStudent, ...] = ()
    seconds: float = 0.0  # grading time of the cohort
    rows: tuple[Outcome, ...] = ()  # the cohort's rows, one per synthetic student

    @property
    def ok(self) -> bool:
        return not self.violations


def run_proof(
    course: Course,
    manifest: Manifest,
    root: Path,
    jobs: int,
    complete: bool = True,
    progress: TextIO | None = None,
) -> ProofResult:
    """Build the release and the synthetic cohort in `root`, grade it with `jobs` workers, and check every rule.

    `complete` is False when `manifest` was narrowed to some notebooks: source
    notebooks outside it are then not reported as unlisted. Progress lines go
    to `progress` (none when it is None).
    """
    violations = _static_violations(course, manifest, complete)
    notebooks = tuple(entry.name for entry in manifest.notebooks)
    workspace = new_workspace(course, root, notebooks)
    subjects = proof_subjects(manifest, load_controls(manifest))
    students = pack_subjects(subjects)
    for student in students:
        write_student(workspace, workspace.release_dir, manifest, student.student_id, student.subjects)
    shown = Progress(len(students), progress or io.StringIO())
    cohort = grade_cohort(workspace, LocalExecutor(jobs), notebooks, shown)
    grades = {}
    for student, row in zip(students, _rows_of(cohort, students)):
        violations += status_violations(row, student)
        for subject in student.subjects:
            grades[subject.student_id] = _grades_of(row, subject)
            violations += check_subject(manifest, subject, grades[subject.student_id])
    return ProofResult(workspace, subjects, grades, tuple(violations), students, cohort.seconds, cohort.rows)


def _rows_of(cohort: CohortResult, students: tuple[SyntheticStudent, ...]) -> list[Outcome]:
    rows = {row.student_id: row for row in cohort.rows}
    return [rows[student.student_id] for student in students]


def _grades_of(row: Outcome, subject: Subject) -> SubmissionGrades:
    if row.grades is None:
        return SubmissionGrades(subject.student_id, (), missing=True)
    return subject_grades(row.grades, subject)


def status_violations(row: Outcome, student: SyntheticStudent) -> list[Violation]:
    """Proof subjects must be graded: a row with nothing graded counts against every subject it holds,
    a row held for a TA against the subjects whose notebooks its findings name (all of them when none is named)."""
    if not row.status.needs_ta:
        return []
    named = {finding.notebook for finding in row.findings} & set(student.notebooks)
    blamed = [s for s in student.subjects if row.status.failed or not named or named & set(s.notebooks)]
    return [Violation(s.student_id, "grading", f"{row.status.label}: {row.message}") for s in blamed]


def _static_violations(course: Course, manifest: Manifest, complete: bool) -> list[Violation]:
    return [Violation("manifest", "static", p) for p in static_problems(course, manifest, complete)]


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
                violations.append(
                    Violation(subject.student_id, where, f"worth {grade.max_score}, manifest says {test.points}")
                )
            elif not rule(grade):
                violations.append(
                    Violation(subject.student_id, where, f"{reason}, got {grade.score}/{grade.max_score}", grade.said)
                )
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
                violations.append(
                    Violation(
                        subject.student_id, where, f"must lose points for {control.misconception}, got full marks"
                    )
                )
            if control.misconception not in grade.diagnosed:
                named = ", ".join(grade.diagnosed) or "nothing"
                violations.append(
                    Violation(
                        subject.student_id, where, f"must name {control.misconception}, named {named}", grade.said
                    )
                )
        elif not grade.full and control.is_alternative:
            violations.append(
                Violation(
                    subject.student_id,
                    where,
                    f"a correct alternative must earn full marks, got {grade.score}/{grade.max_score}",
                    grade.said,
                )
            )
        elif not grade.full:
            violations.append(
                Violation(
                    subject.student_id,
                    where,
                    f"lost points outside its declared cells ({grade.score}/{grade.max_score})",
                    grade.said,
                )
            )
    return violations
