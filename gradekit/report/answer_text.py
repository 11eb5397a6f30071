"""The code a student wrote: the answer cells (nbgrader solution cells) of their notebooks, as one text."""
from __future__ import annotations

import ast
from pathlib import Path

import nbformat


def answer_cells(notebook) -> list[tuple[str, str]]:
    """(grade id, source) of every code answer cell, in notebook order."""
    cells = []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("solution"):
            cells.append((meta.get("grade_id", ""), cell.get("source", "")))
    return cells


def notebooks_text(paths: list[Path]) -> str:
    """The answer cells of the notebooks, each under a comment naming it (comments do not count as code)."""
    parts = []
    for path in sorted(paths, key=lambda p: p.name):
        for grade_id, source in answer_cells(nbformat.read(path, as_version=4)):
            parts.append(f"# {path.stem} {grade_id}\n{without_docstrings(source).rstrip()}\n")
    return "\n".join(parts)


def without_docstrings(source: str) -> str:
    """The cell without its docstrings: the release wrote them, and shown highlighted they hide the student's lines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    dropped = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _has_docstring(node):
            dropped.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
    return "\n".join(line for number, line in enumerate(source.splitlines(), start=1) if number not in dropped)


def _has_docstring(node) -> bool:
    first = node.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def student_texts(submitted_dir: Path, assignment: str) -> tuple[dict[str, str], dict[str, str]]:
    """Each student's answer text, and the students whose notebooks could not be read (with the reason)."""
    texts, unreadable = {}, {}
    for folder in sorted(Path(submitted_dir).glob(f"*/{assignment}")):
        student = folder.parent.name
        try:
            texts[student] = notebooks_text(sorted(folder.glob("*.ipynb")))
        except Exception as error:  # a broken submission is noted, never fatal to the report
            unreadable[student] = f"{type(error).__name__}: {error}"
    return texts, unreadable
