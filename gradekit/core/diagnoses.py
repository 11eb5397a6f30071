"""Misconceptions named in graded notebooks: the `[misconception: <id>]` tags of failed checks."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from gradekit.core.cell_ids import grade_id

TAG = re.compile(r"\[misconception: ([a-z0-9][a-z0-9-]*)\]")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def failure_text(cell) -> str:
    """Everything a failed cell reported: error name, value and traceback, plus stderr."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            parts.extend([output.get("ename", ""), output.get("evalue", "")])
            parts.extend(output.get("traceback", []))
        elif output.get("output_type") == "stream" and output.get("name") == "stderr":
            parts.append(output.get("text", ""))
    return ANSI.sub("", "\n".join(parts))


def named_misconceptions(text: str) -> tuple[str, ...]:
    """The misconception ids named in `text`, in order of first appearance."""
    return tuple(dict.fromkeys(TAG.findall(text)))


def diagnoses_by_cell(graded_notebook: Path) -> dict[str, tuple[str, ...]]:
    """For each graded cell of a notebook, the misconceptions its output names."""
    notebook = nbformat.read(graded_notebook, as_version=4)
    return {
        cell_id: named_misconceptions(failure_text(cell))
        for cell in notebook.cells
        if (cell_id := grade_id(cell)) and cell.cell_type == "code"
    }
