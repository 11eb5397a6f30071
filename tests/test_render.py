import pytest

from gradekit.authoring.cells import BEGIN_SOLUTION
from gradekit.authoring.render import render_cells
from gradekit.core.cell_ids import cells_by_grade_id
from gradekit.core.notebook_script import ScriptError, parse_script

pytestmark = pytest.mark.unit

SCRIPT = """# %% [markdown] intro
# Text.

# %% answer answer_float64_leaf
from solutions.reference.history import float64_leaf

# %% test test_float64_leaf points=2 targets=numpy-default-dtype
pass

# %% [markdown] task task_w points=0
# Question.

# %% [markdown] answer answer_w points=3
# Model answer.
"""


def test_cells_carry_nbgrader_roles_and_their_grade_id_as_cell_id():
    notebook = render_cells(parse_script(SCRIPT))
    cells = cells_by_grade_id(notebook)
    assert [cell.id for cell in notebook.cells] == list(cells)
    assert cells["intro"].metadata.nbgrader["locked"] and not cells["intro"].metadata.nbgrader["grade"]
    assert cells["test_float64_leaf"].metadata.nbgrader["points"] == 2
    assert cells["task_w"].metadata.nbgrader["task"] and cells["task_w"].cell_type == "markdown"
    written = cells["answer_w"].metadata.nbgrader
    assert written["grade"] and written["solution"] and written["points"] == 3


def test_an_answer_cell_holds_the_reference_between_solution_markers():
    answer = cells_by_grade_id(render_cells(parse_script(SCRIPT)))["answer_float64_leaf"]
    assert answer.source.startswith("def float64_leaf(")
    assert BEGIN_SOLUTION in answer.source
    assert answer.metadata.nbgrader["solution"] and not answer.metadata.nbgrader["grade"]


@pytest.mark.parametrize("body", ["import torch", "from solutions.reference.history import float64_leaf as f", "x = 1"])
def test_an_answer_body_must_import_reference_functions_by_name(body):
    with pytest.raises(ScriptError):
        render_cells(parse_script(f"# %% answer answer_f\n{body}\n"))
