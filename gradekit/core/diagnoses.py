"""Misconceptions named in graded notebooks: the `[misconception: <id>]` tags of failed checks."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import nbformat.reader
from nbformat import NotebookNode

from gradekit.core.cell_ids import grade_id

TAG = re.compile(r"\[misconception: ([a-z0-9][a-z0-9-]*)\]")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def failure_text(cell: NotebookNode) -> str:
    """Everything a failed cell reported: error name, value and traceback, plus stderr."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            parts.extend([output.get("ename", ""), output.get("evalue", "")])
            parts.extend(output.get("traceback", []))
        elif output.get("output_type") == "stream" and output.get("name") == "stderr":
            parts.append(output.get("text", ""))
    return ANSI.sub("", "\n".join(parts))


def failure_message(cell: NotebookNode, limit: int = 600) -> str:
    """What a failed cell said, in one line: its error's name and value, else its stderr ("" when it passed)."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            said = f"{output.get('ename', '')}: {output.get('evalue', '')}"
            return one_line(ANSI.sub("", said), limit)
    stderr = [
        o.get("text", "")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stderr"
    ]
    return one_line(ANSI.sub("", "".join(stderr)), limit)


def read_graded(graded_notebook: Path) -> NotebookNode:
    """A graded notebook as the grader wrote it, read once for both tables below (not validated again)."""
    with open(graded_notebook, encoding="utf-8") as handle:
        return nbformat.reader.reads(handle.read())


def _notebook(graded: Path | NotebookNode) -> NotebookNode:
    return read_graded(graded) if isinstance(graded, Path) else graded


def failure_messages(graded_notebook: Path | NotebookNode) -> dict[str, str]:
    """For each graded code cell of a notebook that said something on failing, what it said."""
    notebook = _notebook(graded_notebook)
    said = {grade_id(cell): failure_message(cell) for cell in notebook.cells if cell.cell_type == "code"}
    return {cell_id: text for cell_id, text in said.items() if cell_id and text}


def one_line(text: str, limit: int = 600) -> str:
    """`text` on one line, cut to `limit` characters."""
    joined = " ".join(text.split())
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."


def named_misconceptions(text: str) -> tuple[str, ...]:
    """The misconception ids named in `text`, in order of first appearance."""
    return tuple(dict.fromkeys(TAG.findall(text)))


def diagnoses_by_cell(graded_notebook: Path | NotebookNode) -> dict[str, tuple[str, ...]]:
    """For each graded cell of a notebook, the misconceptions its output names."""
    notebook = _notebook(graded_notebook)
    return {
        cell_id: named_misconceptions(failure_text(cell))
        for cell in notebook.cells
        if (cell_id := grade_id(cell)) and cell.cell_type == "code"
    }
