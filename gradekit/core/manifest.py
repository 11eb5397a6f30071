"""The course's exercises, read from where they are authored.

solutions/manifest.toml holds only what the notebooks do not say: each
notebook's lesson section and title. Everything else comes from the notebook
scripts (solutions/notebooks/): an answer cell and the reference functions it
imports make an exercise, the test cells after it (with their points and the
misconceptions their headers target) grade it, and a task cell followed by a
free-response cell is an answer a TA grades. The assignment id is the course's.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from gradekit.core.course import REPO_ROOT, load_course
from gradekit.core.notebook_script import REFERENCE_PACKAGE, Role, ScriptCell, ScriptError, answer_import, read_script

MANIFEST_FILE = REPO_ROOT / "solutions" / "manifest.toml"
SCRIPTS_DIR = MANIFEST_FILE.parent / "notebooks"
CONTROLS_PACKAGE = "solutions.controls"
NOTEBOOK_FIELDS = ("name", "section", "title")


@dataclasses.dataclass(frozen=True)
class TestCell:
    __test__ = False  # a manifest record, not a pytest class

    cell: str
    points: float
    targets: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Exercise:
    notebook: str
    answer_cell: str
    functions: tuple[str, ...]
    tests: tuple[TestCell, ...]


@dataclasses.dataclass(frozen=True)
class ManualAnswer:
    """A free-response answer graded by a TA, and the task cell holding its question and mark scheme."""

    notebook: str
    answer_cell: str
    task_cell: str
    points: float


@dataclasses.dataclass(frozen=True)
class NotebookEntry:
    name: str
    section: str
    title: str
    reference: str
    controls: str


@dataclasses.dataclass(frozen=True)
class Manifest:
    assignment: str
    notebooks: tuple[NotebookEntry, ...]
    exercises: tuple[Exercise, ...]
    manual: tuple[ManualAnswer, ...] = ()

    def notebook(self, name: str) -> NotebookEntry:
        for entry in self.notebooks:
            if entry.name == name:
                return entry
        raise KeyError(f"notebook {name!r} is not in the manifest")

    def exercises_of(self, notebook: str) -> tuple[Exercise, ...]:
        return tuple(e for e in self.exercises if e.notebook == notebook)

    def test_cells_of(self, notebook: str) -> tuple[TestCell, ...]:
        return tuple(t for e in self.exercises_of(notebook) for t in e.tests)

    def exercise_defining(self, notebook: str, function: str) -> Exercise:
        for exercise in self.exercises_of(notebook):
            if function in exercise.functions:
                return exercise
        raise KeyError(f"no exercise of {notebook} defines {function!r}")

    def only(self, names: list[str]) -> "Manifest":
        """The part of the manifest about the named notebooks."""
        unknown = set(names) - {entry.name for entry in self.notebooks}
        if unknown:
            raise KeyError(f"not in the manifest: {', '.join(sorted(unknown))}")
        return Manifest(
            assignment=self.assignment,
            notebooks=tuple(n for n in self.notebooks if n.name in names),
            exercises=tuple(e for e in self.exercises if e.notebook in names),
            manual=tuple(m for m in self.manual if m.notebook in names),
        )

    def points_of(self, notebook: str) -> float:
        return sum(t.points for t in self.test_cells_of(notebook))


def load_manifest(path: Path = MANIFEST_FILE, assignment: str | None = None) -> Manifest:
    """The notebooks listed at `path`, their exercises read from the scripts in the `notebooks` folder beside it."""
    data = tomllib.loads(Path(path).read_text())
    listed = [_listed_notebook(entry, path) for entry in data["notebook"]]
    # Notebook names start with their lesson number, so name order is lesson order.
    listed.sort(key=lambda pair: pair[0])
    notebooks, exercises, manual = [], [], []
    for name, section, title in listed:
        script = read_script(Path(path).parent / "notebooks" / f"{name}.py")
        reference = _reference_module(name, script)
        notebooks.append(
            NotebookEntry(name, section, title, reference, reference.replace(REFERENCE_PACKAGE, CONTROLS_PACKAGE, 1))
        )
        exercises += _exercises(name, script)
        manual += _manual_answers(name, script)
    return Manifest(assignment or load_course().assignment_id, tuple(notebooks), tuple(exercises), tuple(manual))


def _listed_notebook(entry: dict, path: Path) -> tuple[str, str, str]:
    if set(entry) != set(NOTEBOOK_FIELDS):
        extra = ", ".join(sorted(set(entry) ^ set(NOTEBOOK_FIELDS)))
        raise ValueError(
            f"{path}: a notebook entry has exactly {', '.join(NOTEBOOK_FIELDS)} (not: {extra}); the rest is in its script"
        )
    return entry["name"], str(entry["section"]), entry["title"]


def _reference_module(notebook: str, script: tuple[ScriptCell, ...]) -> str:
    """The one reference module every answer cell of the notebook imports from."""
    modules = {answer_import(cell)[0] for cell in script if cell.role is Role.ANSWER}
    if len(modules) != 1:
        raise ScriptError(
            f"{notebook}: answer cells must import from one reference module, found {sorted(modules) or 'none'}"
        )
    return modules.pop()


def _exercises(notebook: str, script: tuple[ScriptCell, ...]) -> list[Exercise]:
    """An answer cell and the test cells that follow it, up to the next answer cell."""
    found: list[tuple[ScriptCell, list[TestCell]]] = []
    for cell in script:
        if cell.role is Role.ANSWER:
            found.append((cell, []))
        elif cell.role is Role.TEST:
            if not found:
                raise ScriptError(f"{notebook}: test cell {cell.grade_id} comes before any answer cell")
            found[-1][1].append(TestCell(cell.grade_id, float(cell.required_points), cell.targets))
    return [Exercise(notebook, answer.grade_id, answer_import(answer)[1], tuple(tests)) for answer, tests in found]


def _manual_answers(notebook: str, script: tuple[ScriptCell, ...]) -> list[ManualAnswer]:
    """Each free-response cell, with the task cell (question and mark scheme) that comes before it."""
    answers, task = [], None
    for cell in script:
        if cell.role is Role.TASK:
            task = cell
        elif cell.role is Role.WRITTEN:
            if task is None:
                raise ScriptError(f"{notebook}: free-response cell {cell.grade_id} has no task cell before it")
            answers.append(ManualAnswer(notebook, cell.grade_id, task.grade_id, float(cell.required_points)))
            task = None
    return answers
