"""The proof's rules on in-process results: `gradekit check`, the quick loop before `gradekit prove`.

The same subjects as the proof (the reference, the blank stubs, every negative
control) run each notebook script in this process (checks_in_process), their
outcomes become grades, and the proof's own `check_subject` judges them. Then the same subjects run
with each test cell cut down to its visible part (proof/visible.py): the share
of controls a student is warned of before submitting, per notebook, and a
violation for every right answer a visible check refuses. While the reference
runs, the calls its test cells send to the student's side are recorded: each
exercise's stated inputs set beside them (proof/coverage.py), an undeclared gap
is a violation.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from gradekit.authoring.cells import stub_solutions
from gradekit.authoring.checks_in_process import load_support_modules, run_checks
from gradekit.authoring.consistency import static_problems
from gradekit.authoring.render import answer_text
from gradekit.authoring.solutions import load_controls
from gradekit.core.course import Course
from gradekit.core.diagnoses import one_line
from gradekit.core.grades import CellGrade, SubmissionGrades
from gradekit.core.manifest import SCRIPTS_DIR, Manifest
from gradekit.core.notebook_script import Role, ScriptCell, read_script
from gradekit.proof.coverage import KNOWN_GAPS, CallRecord, ExerciseCoverage, coverage, gap_problems, load_known_gaps
from gradekit.proof.rules import Violation, check_subject
from gradekit.proof.subjects import BLANK_ID, REFERENCE_ID, Subject, answer_sources, proof_subjects
from gradekit.proof.visible import (
    FailedCells,
    VisibleShare,
    failed_visibly,
    visible_refusals,
    visible_script,
    visible_shares,
)


@dataclasses.dataclass(frozen=True)
class CheckResult:
    subjects: tuple[Subject, ...]
    grades: dict[str, SubmissionGrades]  # by subject
    violations: tuple[Violation, ...]
    seconds: float
    visible: tuple[VisibleShare, ...] = ()  # per notebook: the controls its visible checks stop
    coverage: tuple[ExerciseCoverage, ...] = ()  # per exercise: the inputs its text states and its tests pass

    @property
    def ok(self) -> bool:
        return not self.violations


def check_course(
    course: Course, manifest: Manifest, scripts_dir: Path = SCRIPTS_DIR, complete: bool = True
) -> CheckResult:
    """Run every subject of the proof in this process and apply the proof's rules to the results."""
    started = time.monotonic()
    load_support_modules(course.source_dir)
    scripts = {entry.name: read_script(scripts_dir / f"{entry.name}.py") for entry in manifest.notebooks}
    subjects = proof_subjects(manifest, load_controls(manifest))
    violations = [Violation("manifest", "static", p) for p in static_problems(course, manifest, complete)]
    grades = {}
    records = {name: CallRecord() for name in scripts}  # what the reference's test cells pass
    for subject in subjects:
        watched = records if subject.student_id == REFERENCE_ID else None
        grades[subject.student_id] = subject_grades(course, manifest, scripts, subject, watched)
        violations += check_subject(manifest, subject, grades[subject.student_id])
    covered = tuple(
        item
        for name, script in scripts.items()
        for item in coverage(name, script, manifest.exercises_of(name), records[name])
    )
    violations += [
        Violation("reference", "stated inputs", problem)
        for problem in gap_problems(covered, load_known_gaps(KNOWN_GAPS), set(scripts))
    ]
    visible = {name: visible_script(script) for name, script in scripts.items()}
    failed = failed_visibly(subjects, lambda s, notebook: visible_failures(course, manifest, visible, s, notebook))
    violations += [
        Violation(r.student_id, f"{r.notebook}/{r.cell}", "a visible check refuses a right answer", one_line(r.said))
        for r in visible_refusals(subjects, failed)
    ]
    shares = visible_shares(scripts, subjects, failed)
    violations += [
        Violation(control, share.notebook, "declares that only hidden tests can catch it, yet a visible check stops it")
        for share in shares
        for control in share.stale_reasons
    ]
    return CheckResult(subjects, grades, tuple(violations), time.monotonic() - started, shares, covered)


def visible_failures(course: Course, manifest: Manifest, scripts: dict, subject: Subject, notebook: str) -> FailedCells:
    """The test cells of `notebook` whose visible part fails for `subject`, with what each said."""
    answers = subject_answers(course, manifest, scripts[notebook], subject, notebook)
    outcomes = run_checks(scripts[notebook], answers, f"{subject.student_id}/{notebook}/visible")
    return {outcome.cell: outcome.failure for outcome in outcomes if not outcome.passed}


def subject_grades(
    course: Course, manifest: Manifest, scripts: dict, subject: Subject, records: dict[str, CallRecord] | None = None
) -> SubmissionGrades:
    """The subject's notebooks run in process; a passed test cell earns its points, a failed one zero.

    With `records`, each notebook's calls to the student's side are noted in its record.
    """
    cells = []
    for notebook in subject.notebooks:
        answers = subject_answers(course, manifest, scripts[notebook], subject, notebook)
        watcher = records[notebook] if records is not None else None
        for outcome in run_checks(scripts[notebook], answers, f"{subject.student_id}/{notebook}", watcher):
            score = outcome.points if outcome.passed else 0
            said = one_line(outcome.failure)
            cells.append(CellGrade(notebook, outcome.cell, score, outcome.points, outcome.named, said))
    return SubmissionGrades(subject.student_id, tuple(cells))


def subject_answers(
    course: Course, manifest: Manifest, script: tuple[ScriptCell, ...], subject: Subject, notebook: str
) -> dict[str, str]:
    """What the subject puts in each answer cell: the proof's own answer text, or the release's stubs."""
    if subject.student_id == BLANK_ID:
        return {c.grade_id: stub_solutions(answer_text(c), course.code_stub) for c in script if c.role is Role.ANSWER}
    return answer_sources(manifest, notebook, subject.control)
