"""Static agreement between the manifest, the source notebooks, the catalog and the controls.

Each function returns a list of problems (empty when all agree), so the proof
harness can report them all at once and tests can assert on them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat

from gradekit.authoring.advice import (
    Diagnosis,
    carries_another,
    diagnoses_in_code,
    error_table,
    recommended,
    says_what_to_do,
)
from gradekit.authoring.cells import is_demo
from gradekit.authoring.solutions import NegativeControl, load_controls
from gradekit.core.catalog import Misconception, load_catalog
from gradekit.core.cell_ids import cells_by_grade_id
from gradekit.core.course import Course
from gradekit.core.manifest import Manifest


def source_notebook(source_dir: Path, name: str):
    return nbformat.read(source_dir / f"{name}.ipynb", as_version=4)


def notebook_problems(manifest: Manifest, source_dir: Path, complete: bool = True) -> list[str]:
    """Every manifest cell exists in its notebook with the right role and points, and nothing is graded unlisted.

    With `complete` False (a manifest narrowed to some notebooks), other source notebooks are not reported.
    """
    problems = []
    listed = {entry.name for entry in manifest.notebooks}
    on_disk = {p.stem for p in source_dir.glob("*.ipynb")}
    if complete:
        problems += [f"{n}.ipynb is in source/ but not in the manifest" for n in sorted(on_disk - listed)]
    problems += [f"{n}.ipynb is in the manifest but not in source/" for n in sorted(listed - on_disk)]
    for name in sorted(listed & on_disk):
        problems += _cell_problems(manifest, name, cells_by_grade_id(source_notebook(source_dir, name)))
    return problems


def _cell_problems(manifest: Manifest, notebook: str, cells: dict) -> list[str]:
    problems = []
    expected_tests = {t.cell: t.points for t in manifest.test_cells_of(notebook)}
    for exercise in manifest.exercises_of(notebook):
        meta = cells.get(exercise.answer_cell, {}).get("metadata", {}).get("nbgrader", {})
        if not meta.get("solution") or meta.get("grade"):
            problems.append(f"{notebook}: {exercise.answer_cell} is not an autograded answer cell")
    for cell_id, cell in cells.items():
        meta = cell.metadata.nbgrader
        if meta.get("grade") and cell.cell_type == "code":
            if cell_id not in expected_tests:
                problems.append(f"{notebook}: test cell {cell_id} is graded but not in the manifest")
            elif float(meta.get("points", 0)) != expected_tests[cell_id]:
                problems.append(
                    f"{notebook}: {cell_id} is worth {meta.get('points')} points, the manifest says {expected_tests[cell_id]}"
                )
    for cell_id in expected_tests:
        if cell_id not in cells:
            problems.append(f"{notebook}: the manifest lists {cell_id}, the notebook has no such cell")
    return problems + _manual_problems(manifest, notebook, cells) + demo_problems(notebook, cells)


def demo_problems(notebook: str, cells: dict) -> list[str]:
    """A demo defines nothing another code cell reads: the sealed grader does not run it on its side."""
    shown = {cell_id: _defined_names(ast.parse(cell.source)) for cell_id, cell in cells.items() if is_demo(cell)}
    problems = []
    for cell_id, cell in cells.items():
        if cell.cell_type != "code" or cell_id in shown:
            continue
        free = _free_names(ast.parse(cell.source))
        for demo, names in shown.items():
            problems += [
                f"{notebook}: {cell_id} reads {name!r}, which the demo {demo} defines" for name in sorted(names & free)
            ]
    return problems


def _defined_names(tree: ast.Module) -> set[str]:
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return stored | {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def _free_names(tree: ast.Module) -> set[str]:
    """Names the cell reads and never binds itself (a rough view: enough to tell a demo's names apart)."""
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    bound = _defined_names(tree) | {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in n.args}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return read - bound


MARK_SCHEME = "=== BEGIN MARK SCHEME ==="


def _manual_problems(manifest: Manifest, notebook: str, cells: dict) -> list[str]:
    """Free-response answers are manually graded markdown cells under a task cell with a mark scheme."""
    problems = []
    listed = {m.answer_cell: m for m in manifest.manual if m.notebook == notebook}
    for cell_id, cell in cells.items():
        meta = cell.metadata.nbgrader
        if cell.cell_type == "markdown" and meta.get("grade") and cell_id not in listed:
            problems.append(f"{notebook}: manually graded {cell_id} is not in the manifest")
    for answer in listed.values():
        cell, task = cells.get(answer.answer_cell), cells.get(answer.task_cell)
        if cell is None or cell.cell_type != "markdown" or not cell.metadata.nbgrader.get("solution"):
            problems.append(f"{notebook}: {answer.answer_cell} is not a manually graded markdown answer")
        elif float(cell.metadata.nbgrader.get("points", 0)) != answer.points:
            problems.append(f"{notebook}: {answer.answer_cell} points differ from the manifest")
        if task is None or MARK_SCHEME not in task.source:
            problems.append(f"{notebook}: {answer.task_cell} holds no mark scheme")
    return problems


def static_problems(course: Course, manifest: Manifest, complete: bool = True) -> list[str]:
    """Every problem the course's files show before anything is graded."""
    problems = notebook_problems(manifest, course.source_dir, complete)
    catalog = load_catalog()
    problems += catalog_problems(manifest, catalog, load_controls(manifest), course.source_dir)
    return problems + advice_problems(manifest, catalog, course.source_dir)


CHECKS_MODULE = "autograd_checks.py"  # the public module whose COMMON_ERRORS word the shared errors


def advice_problems(manifest: Manifest, catalog: dict[str, Misconception], source_dir: Path) -> list[str]:
    """Every diagnosis says what to do, and no diagnosis a notebook can show leads into another of its mistakes.

    A notebook's mistakes are the misconceptions its test cells target or name; its diagnoses are
    their catalog entries, the messages its checks write, and the shared error table where a call
    leaves it in force. A phrase a misconception `does` in the advice of another's diagnosis is refused.
    """
    problems = [
        f"the catalog's diagnosis of {m.id!r} says nothing to do: add what the student should do, as an instruction"
        for m in catalog.values()
        if not says_what_to_do(m.diagnosis)
    ]
    module = source_dir / CHECKS_MODULE
    module_text = module.read_text() if module.is_file() else ""
    shared = error_table(module_text, "COMMON_ERRORS", CHECKS_MODULE) if module_text else []
    problems += silent_messages(diagnoses_in_code(module_text, CHECKS_MODULE)[0])
    for entry in manifest.notebooks:
        diagnoses = notebook_diagnoses(source_notebook(source_dir, entry.name), entry.name, shared)
        problems += silent_messages([d for d in diagnoses if d.where != CHECKS_MODULE])
        mistakes = _tested_in(manifest, entry.name) | {d.misconception for d in diagnoses if d.misconception}
        diagnoses += [Diagnosis(catalog[m].diagnosis, m, "the catalog") for m in sorted(mistakes) if m in catalog]
        problems += _leading_into(entry.name, diagnoses, {m: catalog[m] for m in mistakes if m in catalog})
    return problems


def silent_messages(diagnoses: list[Diagnosis]) -> list[str]:
    """A check message a student can be shown that says nothing to do, unless it only carries another message."""
    said = (
        f"{d.where}: the message {d.text!r} says nothing to do: add what the student should do, as an instruction"
        for d in diagnoses
        if not says_what_to_do(d.text) and not carries_another(d)
    )
    return list(dict.fromkeys(said))


def notebook_diagnoses(notebook, name: str, shared: list[Diagnosis]) -> list[Diagnosis]:
    """The messages the notebook's code cells write, and the shared table's when a call leaves it in force."""
    diagnoses: list[Diagnosis] = []
    uses_shared = False
    for cell_id, cell in cells_by_grade_id(notebook).items():
        if cell.cell_type == "code":
            found, leaves_shared = diagnoses_in_code(cell.source, f"{name}/{cell_id}")
            diagnoses += found
            uses_shared = uses_shared or leaves_shared
    return diagnoses + (shared if uses_shared else [])


def _tested_in(manifest: Manifest, notebook: str) -> set[str]:
    return {m for exercise in manifest.exercises_of(notebook) for test in exercise.tests for m in test.targets}


def _leading_into(notebook: str, diagnoses: list[Diagnosis], mistakes: dict[str, Misconception]) -> list[str]:
    problems = []
    for diagnosis in diagnoses:
        for other in sorted(mistakes.keys() - {diagnosis.misconception}):
            problems += [
                f"{notebook}: the diagnosis of {diagnosis.misconception or 'an unnamed failure'!r} "
                f"({diagnosis.where}) advises {phrase!r}, which is what {other!r} does, a mistake "
                f"{notebook} also tests: advise the way forward instead"
                for phrase in recommended(diagnosis.text, mistakes[other].does)
            ]
    return sorted(set(problems))


def catalog_problems(
    manifest: Manifest, catalog: dict, controls: tuple[NegativeControl, ...], source_dir: Path
) -> list[str]:
    """Ids resolve in the catalog; every declared target is proven by a control that fails that cell."""
    problems = []
    targets = {t.cell: set(t.targets) for e in manifest.exercises for t in e.tests}
    for cell, ids in targets.items():
        problems += [f"{cell} targets {m!r}, which is not in the catalog" for m in sorted(ids - catalog.keys())]
    for control in (c for c in controls if not c.is_alternative):
        if control.misconception not in catalog:
            problems.append(f"control {control.name} names unknown misconception {control.misconception!r}")
        for cell in control.fails:
            if control.misconception not in targets.get(cell, set()):
                problems.append(f"control {control.name} fails {cell}, which does not target {control.misconception!r}")
    proven = {(cell, c.misconception) for c in controls for cell in c.fails}
    for cell, ids in targets.items():
        problems += [
            f"{cell} targets {m!r} but no negative control proves it" for m in sorted(ids) if (cell, m) not in proven
        ]
    for entry in manifest.notebooks:
        named = set(_named_in_tests(source_notebook(source_dir, entry.name)))
        problems += [f"{entry.name} names {m!r}, which is not in the catalog" for m in sorted(named - catalog.keys())]
    return problems


# Where code names a misconception: the argument of these calls at this position or keyword.
_NAMING_CALLS = {"expect": 2, "expect_close": 3, "Diagnosis": 1}


def _named_in_tests(notebook) -> list[str]:
    """Misconception ids written literally in the notebook's code: check calls and error tables."""
    named = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        named += [m for node in ast.walk(tree) for m in _ids_in(node)]
    return named


def _ids_in(node) -> list[str]:
    if isinstance(node, ast.Call):
        name = getattr(node.func, "id", getattr(node.func, "attr", None))
        if name in _NAMING_CALLS:
            position = _NAMING_CALLS[name]
            candidates = node.args[position : position + 1] + [
                k.value for k in node.keywords if k.arg == "misconception"
            ]
            return [c.value for c in candidates if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    # Error tables: (substring, misconception, message) triples whose middle is shaped like an id.
    if isinstance(node, ast.Tuple) and len(node.elts) == 3:
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            middle = node.elts[1]
            if isinstance(middle, ast.Constant) and isinstance(middle.value, str) and _ID_SHAPE.match(middle.value):
                return [middle.value]
    return []


_ID_SHAPE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+){2,}$")
