import nbformat
import pytest

from gradekit.core.cell_ids import cells_by_grade_id, grade_id

pytestmark = pytest.mark.unit


def _cell(grade: str | None):
    metadata = {"nbgrader": {"grade_id": grade}} if grade else {}
    return nbformat.v4.new_code_cell("pass", metadata=metadata)


def test_a_graded_cell_is_named_by_its_grade_id_and_a_plain_cell_has_none():
    assert grade_id(_cell("test_vjp")) == "test_vjp"
    assert grade_id(_cell(None)) is None


def test_cells_are_indexed_by_grade_id_and_plain_cells_are_left_out():
    notebook = nbformat.v4.new_notebook(cells=[_cell("answer_vjp"), _cell(None), _cell("test_vjp")])
    assert list(cells_by_grade_id(notebook)) == ["answer_vjp", "test_vjp"]
