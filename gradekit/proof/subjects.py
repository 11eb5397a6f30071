"""Synthetic submissions built from the release notebooks: reference, blank stubs, negative controls."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import nbformat

from gradekit.authoring.cells import function_source, join_functions
from gradekit.authoring.solutions import NegativeControl, reference_function
from gradekit.core.cell_ids import cells_by_grade_id
from gradekit.core.course import Course
from gradekit.core.manifest import Manifest
from gradekit.grading.intake import stamp

REFERENCE_ID = "reference"
BLANK_ID = "blank"


@dataclasses.dataclass(frozen=True)
class Subject:
    """One synthetic student: what it submits and, for a control, what it must fail (an alternative fails nothing)."""

    student_id: str
    notebooks: tuple[str, ...]
    control: NegativeControl | None = None

    @property
    def kind(self) -> str:
        if self.control is not None:
            return "alternative" if self.control.is_alternative else "control"
        return self.student_id


def proof_subjects(manifest: Manifest, controls: tuple[NegativeControl, ...]) -> tuple[Subject, ...]:
    """The reference and the blank stubs submit every notebook; a control submits only the notebook it rewrites."""
    every = tuple(entry.name for entry in manifest.notebooks)
    subjects = [Subject(REFERENCE_ID, every), Subject(BLANK_ID, every)]
    subjects.extend(Subject(c.student_id, (c.notebook,), c) for c in controls)
    return tuple(subjects)


def first_controls(subjects: tuple[Subject, ...], per_notebook: int) -> tuple[Subject, ...]:
    """The reference, the blank stubs and the first `per_notebook` listed controls of each notebook, in order."""
    taken: dict[str, int] = {}
    chosen = []
    for subject in subjects:
        if subject.control is not None:
            taken[subject.control.notebook] = taken.get(subject.control.notebook, 0) + 1
            if taken[subject.control.notebook] > per_notebook:
                continue
        chosen.append(subject)
    return tuple(chosen)


def answer_sources(manifest: Manifest, notebook: str, control: NegativeControl | None) -> dict[str, str]:
    """The text of every answer cell of `notebook`: the reference, except where the control rewrites a function."""
    return mixed_answer_sources(manifest, notebook, () if control is None else (control,))


def mixed_answer_sources(manifest: Manifest, notebook: str, chosen: tuple[NegativeControl, ...]) -> dict[str, str]:
    """The text of every answer cell of `notebook`: the reference, except the functions the chosen answers rewrite."""
    rewritten = {c.function: c.source for c in chosen if c.notebook == notebook}
    sources = {}
    for exercise in manifest.exercises_of(notebook):
        parts = [
            rewritten.get(name) or function_source(reference_function(manifest, notebook, name))
            for name in exercise.functions
        ]
        sources[exercise.answer_cell] = join_functions(parts)
    return sources


def written_answer_sources(manifest: Manifest, notebook: str, source_notebook: Path) -> dict[str, str]:
    """The model text of every free-response answer of `notebook`, as its source notebook holds it."""
    cells = cells_by_grade_id(nbformat.read(source_notebook, as_version=4))
    return {
        answer.answer_cell: cells[answer.answer_cell].source
        for answer in manifest.manual
        if answer.notebook == notebook
    }


def fill_answers(release_notebook: Path, sources: dict[str, str]):
    """The release notebook with the given answer cells replaced, as a student would type them."""
    notebook = nbformat.read(release_notebook, as_version=4)
    cells = cells_by_grade_id(notebook)
    for cell_id, source in sources.items():
        if cell_id not in cells:
            raise KeyError(f"{release_notebook.name} has no answer cell {cell_id!r}")
        cells[cell_id].source = source
    return notebook


def write_submission(course: Course, release_dir: Path, manifest: Manifest, subject: Subject) -> Path:
    """Write the subject's notebooks to submitted/<student>/<assignment>/ and return that folder."""
    return write_student(course, release_dir, manifest, subject.student_id, (subject,))


def write_student(
    course: Course, release_dir: Path, manifest: Manifest, student_id: str, subjects: tuple[Subject, ...]
) -> Path:
    """One student's submission holding the notebooks of several subjects, each notebook from one subject."""
    folder = course.submitted_dir / student_id / course.assignment_id
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for subject in subjects:
        for name in subject.notebooks:
            release_notebook = release_dir / f"{name}.ipynb"
            if subject.student_id == BLANK_ID:
                shutil.copyfile(release_notebook, folder / release_notebook.name)
                continue
            notebook = fill_answers(release_notebook, answer_sources(manifest, name, subject.control))
            nbformat.write(notebook, folder / release_notebook.name)
    stamp(folder)  # as nbgrader's submit would: release_feedback needs it
    return folder
