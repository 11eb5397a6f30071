"""The exercise manifest (solutions/manifest.toml): one place that says what is graded and how.

The misconceptions each test cell targets are read from the headers of the
notebook scripts (solutions/notebooks/), beside the checks they describe.
"""
from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from gradekit.authoring.notebook_script import Role, read_script
from gradekit.course import REPO_ROOT

MANIFEST_FILE = REPO_ROOT / "solutions" / "manifest.toml"
SCRIPTS_DIR = MANIFEST_FILE.parent / "notebooks"


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


def load_manifest(path: Path = MANIFEST_FILE) -> Manifest:
    """The manifest at `path`, with test cell targets from the scripts in the `notebooks` folder beside it."""
    data = tomllib.loads(Path(path).read_text())
    # Notebook names start with their lesson number, so name order is lesson order.
    notebooks = tuple(sorted((NotebookEntry(**entry) for entry in data["notebook"]), key=lambda n: n.name))
    targets = _targets_in_scripts(Path(path).parent / "notebooks", notebooks)
    exercises = tuple(_exercise(entry, targets) for entry in data["exercise"])
    manual = tuple(
        ManualAnswer(m["notebook"], m["answer_cell"], m["task_cell"], float(m["points"])) for m in data.get("manual", ())
    )
    return Manifest(assignment=data["assignment"], notebooks=notebooks, exercises=exercises, manual=manual)


def _targets_in_scripts(scripts_dir: Path, notebooks: tuple[NotebookEntry, ...]) -> dict[tuple[str, str], tuple[str, ...]]:
    """(notebook, test cell) -> the misconceptions its script header names."""
    targets = {}
    for entry in notebooks:
        for cell in read_script(scripts_dir / f"{entry.name}.py"):
            if cell.role is Role.TEST:
                targets[(entry.name, cell.grade_id)] = cell.targets
    return targets


def _exercise(entry: dict, targets: dict[tuple[str, str], tuple[str, ...]]) -> Exercise:
    for test in entry["tests"]:
        if "targets" in test:
            raise ValueError(f"{test['cell']}: targets belong in the header of its notebook script, not the manifest")
    tests = tuple(
        TestCell(cell=t["cell"], points=float(t["points"]), targets=targets.get((entry["notebook"], t["cell"]), ()))
        for t in entry["tests"]
    )
    return Exercise(
        notebook=entry["notebook"],
        answer_cell=entry["answer_cell"],
        functions=tuple(entry["functions"]),
        tests=tests,
    )
