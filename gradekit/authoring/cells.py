"""Notebook cells: nbgrader's cell metadata and answer cells rendered from reference functions."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from typing import Callable, Iterable

import nbformat

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
KIT_METADATA = "gradekit"  # the kit's own key in a cell's metadata, beside nbgrader's
DEMO_KEY = "demo"


# Decorators of the kit's own that mark a function in solutions/; they stay out of an answer cell.
KIT_MARKS = frozenset({"negative_control", "correct_alternative"})


def function_source(function: Callable, name: str | None = None) -> str:
    """The source of `function`, renamed to `name` when given, without the kit's marks.

    Other decorators are part of the answer (`@torch.no_grad()` over a
    function) and stay, in their order, above the `def` line.
    """
    source = textwrap.dedent(inspect.getsource(function))
    definition = ast.parse(source).body[0]
    all_lines = source.splitlines()
    kept = [
        line
        for decorator in getattr(definition, "decorator_list", [])
        if _decorator_name(decorator) not in KIT_MARKS
        for line in all_lines[decorator.lineno - 1 : decorator.end_lineno]
    ]
    lines = all_lines[definition.lineno - 1 :]
    if name is not None:
        lines[0] = lines[0].replace(f"def {function.__name__}(", f"def {name}(", 1)
    return "\n".join([*kept, *lines])


def _decorator_name(decorator: ast.expr) -> str:
    """The last name of a decorator's expression: `correct_alternative` for `@correct_alternative("why")`."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def answer_source(function: Callable) -> str:
    """The function as its answer cell holds it: signature and docstring, then the body between solution markers."""
    lines = function_source(function).splitlines()
    definition = ast.parse("\n".join(lines)).body[0]
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        raise TypeError(f"{function!r} is not defined by a def or class statement")
    first = definition.body[0]
    has_docstring = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
    split = first.end_lineno if has_docstring else first.lineno - 1
    head, body = lines[:split], lines[split:]
    indent = body[0][: len(body[0]) - len(body[0].lstrip())]
    return "\n".join([*head, indent + BEGIN_SOLUTION, *body, indent + END_SOLUTION])


def join_functions(sources: Iterable[str]) -> str:
    return "\n\n\n".join(sources)


def _nbgrader(
    grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None, task: bool = False
) -> dict:
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": task,
    }
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def markdown_cell(grade_id: str, source: str):
    """A read-only lesson text cell."""
    return nbformat.v4.new_markdown_cell(source, metadata=_nbgrader(grade_id, grade=False, solution=False, locked=True))


def setup_cell(grade_id: str, source: str):
    """A read-only code cell (imports, helpers) that nbgrader restores before grading."""
    return nbformat.v4.new_code_cell(source, metadata=_nbgrader(grade_id, grade=False, solution=False, locked=True))


def demo_cell(grade_id: str, source: str):
    """A read-only code cell that only shows something; the sealed grader leaves it to the student's kernel."""
    cell = setup_cell(grade_id, source)
    cell.metadata[KIT_METADATA] = {DEMO_KEY: True}
    return cell


def is_demo(cell) -> bool:
    return bool(cell.get("metadata", {}).get(KIT_METADATA, {}).get(DEMO_KEY))


def answer_cell(grade_id: str, source: str):
    return nbformat.v4.new_code_cell(source, metadata=_nbgrader(grade_id, grade=False, solution=True, locked=False))


def test_cell(grade_id: str, points: float, source: str):
    return nbformat.v4.new_code_cell(
        source, metadata=_nbgrader(grade_id, grade=True, solution=False, locked=True, points=points)
    )


def free_response_cell(grade_id: str, points: float, source: str):
    """A manually graded markdown answer."""
    return nbformat.v4.new_markdown_cell(
        source, metadata=_nbgrader(grade_id, grade=True, solution=True, locked=False, points=points)
    )


def task_cell(grade_id: str, points: float, source: str):
    """A read-only markdown task: the question of a free-response answer and its mark scheme."""
    return nbformat.v4.new_markdown_cell(
        source, metadata=_nbgrader(grade_id, grade=False, solution=False, locked=True, points=points, task=True)
    )


_SOLUTION_REGION = re.compile(
    rf"^(?P<indent>[ \t]*){re.escape(BEGIN_SOLUTION)}\n.*?^[ \t]*{re.escape(END_SOLUTION)}[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


def stub_solutions(source: str, code_stub: str) -> str:
    """The answer cell as the release shows it: each solution region replaced by the indented stub."""
    return _SOLUTION_REGION.sub(
        lambda region: "\n".join(region["indent"] + line for line in code_stub.splitlines()), source
    )
