import nbformat
import pytest

from gradekit.report.answer_text import answer_cells, without_docstrings

pytestmark = pytest.mark.unit


def notebook_with(*cells):
    notebook = nbformat.v4.new_notebook()
    for kind, grade_id, solution, source in cells:
        cell = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
        cell.metadata["nbgrader"] = {"grade_id": grade_id, "solution": solution, "grade": False}
        notebook.cells.append(cell)
    return notebook


def test_only_code_answer_cells_count_in_notebook_order():
    notebook = notebook_with(
        ("code", "answer_b", True, "b = 2"),
        ("code", "test_b", False, "assert b"),
        ("markdown", "written", True, "prose"),
        ("code", "answer_a", True, "a = 1"),
    )
    assert answer_cells(notebook) == [("answer_b", "b = 2"), ("answer_a", "a = 1")]


def test_docstrings_are_left_out_and_code_that_does_not_parse_is_kept_whole():
    source = 'def f(x):\n    """Given.\n\n    More.\n    """\n    return x\n'
    assert without_docstrings(source) == "def f(x):\n    return x"
    assert without_docstrings("def f(:\n    pass") == "def f(:\n    pass"
