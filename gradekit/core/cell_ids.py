"""A graded cell's name: the grade id nbgrader keeps in the cell's metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode


def grade_id(cell: NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def cells_by_grade_id(notebook: NotebookNode) -> dict[str, NotebookNode]:
    named = ((grade_id(cell), cell) for cell in notebook.cells)
    return {name: cell for name, cell in named if name}
