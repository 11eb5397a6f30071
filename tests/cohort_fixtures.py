"""Synthetic cohorts for the grading tests: scratch courses holding proof subjects as students."""

from __future__ import annotations

import csv
import datetime
import io
import shlex
import shutil
from pathlib import Path

import nbformat

from gradekit.authoring.release import clone_workspace, new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.commands.cli import parser
from gradekit.commands.ta_pipeline import report_dir
from gradekit.core.course import REPO_ROOT, Course
from gradekit.core.manifest import Manifest
from gradekit.grading.cohort import grade_cohort, submitted_students
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.intake import TIMESTAMP, TIMESTAMP_FORMAT, stamp
from gradekit.grading.progress import Progress
from gradekit.grading.regrade_diff import REGRADE_FILE
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


def hand_in(course: Course, manifest: Manifest, notebook: str, student: str, when: datetime.datetime) -> None:
    """The reference's answers to `notebook`, handed in by `student` at `when`, as nbgrader's submit leaves them."""
    folder = course.submitted_dir / student / course.assignment_id
    folder.mkdir(parents=True)
    sources = answer_sources(manifest, notebook, None)
    nbformat.write(fill_answers(course.release_dir / f"{notebook}.ipynb", sources), folder / f"{notebook}.ipynb")
    (folder / TIMESTAMP).write_text(when.strftime(TIMESTAMP_FORMAT))
    stamp(folder)


def page_command(page: Path, start: str, section: str = ""):
    """The page's command line that begins with `start` (in its `## section` when given), parsed by the kit's command line.

    A test runs the command as the page writes it, so the page and the test cannot drift apart.
    """
    text = page.read_text()
    if section:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    (line,) = [line for line in text.splitlines() if line.startswith(start)]
    return parser().parse_args(shlex.split(line.split("  #")[0])[3:])


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


# A check tightened between two gradings of the demo class, so that a regrade has something to say.
TIGHTENED = "010_history"
TIGHTENING = 'raise AssertionError("tightened: no answer passes this check now")\n'


def students_failing(students, broken_notebook: str, cell: str) -> set[str]:
    """The demo students who lose `cell` before any check changed: a mistake aimed at it, or the notebook unreadable."""
    return {
        s.student_id
        for s in students
        if broken_notebook in s.broken or any(cell in m.fails for m in s.mistakes if m.notebook == broken_notebook)
    }


def tightest_cell(manifest: Manifest, students) -> str:
    """The test cell of the tightened notebook that the most demo students fail, though some pass it."""
    cells = [test.cell for test in manifest.test_cells_of(TIGHTENED)]
    everyone = {s.student_id for s in students}
    passed_by_some = [c for c in cells if students_failing(students, TIGHTENED, c) != everyone]
    return max(passed_by_some, key=lambda c: len(students_failing(students, TIGHTENED, c)))


def edit_hidden_tests(course: Course, cell_id: str, change) -> str:
    """Rewrite the hidden tests of one test cell of the course's source notebook; returns the cell's old source."""
    path = course.source_dir / f"{TIGHTENED}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    (cell,) = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id]
    old = cell.source
    cell.source = change(old)
    nbformat.write(notebook, path)
    return old


def tighten_check(course: Course, cell_id: str) -> None:
    """The check of `cell_id` fails every answer from now on, as a check tightened too far would."""
    edit_hidden_tests(
        course, cell_id, lambda source: source.replace("### END HIDDEN TESTS", TIGHTENING + "### END HIDDEN TESTS")
    )


def regrade_rows(course: Course) -> dict[str, dict[str, str]]:
    """class-report/regrade.csv by student: the students whose score the last regrade changed."""
    with (report_dir(course) / REGRADE_FILE).open(newline="") as table:
        return {line["student_id"]: line for line in csv.DictReader(table)}


def row_facts(rows):
    """What a regrade must give again: per student the status, notes, findings and every cell's score."""
    return {
        row.student_id: (
            row.status,
            row.notes,
            row.findings,
            tuple((c.notebook, c.cell, c.score, c.max_score, c.diagnosed) for c in row.grades.cells)
            if row.grades
            else (),
        )
        for row in rows
    }
