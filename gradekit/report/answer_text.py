"""The code a student wrote: the answer cells (nbgrader solution cells) of each notebook, as one text per notebook."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
from nbformat import NotebookNode


def answer_cells(notebook) -> list[tuple[str, str]]:
    """(grade id, source) of every code answer cell, in notebook order."""
    cells = []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("solution"):
            cells.append((meta.get("grade_id", ""), cell.get("source", "")))
    return cells


def notebook_text(path: Path) -> str:
    """The answer text of a notebook of the course's own (the release, the source)."""
    return answer_text(nbformat.read(path, as_version=4))


def answer_text(notebook: NotebookNode) -> str:
    """The notebook's answer cells, each under a comment naming it (comments do not count as code)."""
    cells = answer_cells(notebook)
    return "\n".join(f"# {grade_id}\n{without_docstrings(source).rstrip()}\n" for grade_id, source in cells)


def starter_texts(release_dir: Path) -> dict[str, str]:
    """What the release gives every student, per notebook: signatures, docstrings and stubs."""
    return {path.stem: notebook_text(path) for path in sorted(Path(release_dir).glob("*.ipynb"))}


def without_docstrings(source: str) -> str:
    """The cell without its docstrings: the release wrote them, and shown highlighted they hide the student's lines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    dropped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _has_docstring(node):
            dropped.update(range(node.body[0].lineno, (node.body[0].end_lineno or node.body[0].lineno) + 1))
    return "\n".join(line for number, line in enumerate(source.splitlines(), start=1) if number not in dropped)


def _has_docstring(node) -> bool:
    first = node.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
