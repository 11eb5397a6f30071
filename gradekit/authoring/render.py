"""A notebook script rendered as its nbgrader source notebook.

Each cell gets its grade id as its cell id, so rendering the same script twice
gives the same file. Answer cells are rendered from the reference functions
that their script body imports, with the body between solution markers.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import nbformat

from gradekit.authoring import cells
from gradekit.core.notebook_script import Role, ScriptCell, answer_import, read_script

NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def render_script(path: Path):
    """The source notebook that the script at `path` stands for."""
    return render_cells(read_script(path))


def render_cells(script: tuple[ScriptCell, ...]):
    notebook = nbformat.v4.new_notebook(metadata=NOTEBOOK_METADATA)
    notebook.nbformat_minor = 5
    notebook.cells = [_render(cell) for cell in script]
    return notebook


def _render(cell: ScriptCell):
    if cell.role is Role.ANSWER:
        rendered = cells.answer_cell(cell.grade_id, answer_text(cell))
    elif cell.role is Role.TEST:
        rendered = cells.test_cell(cell.grade_id, cell.required_points, cell.body)
    elif cell.role is Role.CODE:
        rendered = cells.setup_cell(cell.grade_id, cell.body)
    elif cell.role is Role.DEMO:
        rendered = cells.demo_cell(cell.grade_id, cell.body)
    elif cell.role is Role.LESSON:
        rendered = cells.markdown_cell(cell.grade_id, cell.body)
    elif cell.role is Role.TASK:
        rendered = cells.task_cell(cell.grade_id, cell.required_points, cell.body)
    else:
        rendered = cells.free_response_cell(cell.grade_id, cell.required_points, cell.body)
    rendered.id = cell.grade_id
    return rendered


def answer_text(cell: ScriptCell) -> str:
    """The answer cell's text: each imported reference function, its body between solution markers."""
    module, names = answer_import(cell)
    reference = importlib.import_module(module)
    return cells.join_functions(cells.answer_source(getattr(reference, name)) for name in names)
