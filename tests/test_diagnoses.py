import nbformat
import pytest

from gradekit.authoring import cells
from gradekit.core.diagnoses import diagnoses_by_cell, failure_messages, failure_text, named_misconceptions, one_line

pytestmark = pytest.mark.unit


def test_tags_are_read_in_order_without_repeats():
    text = "[misconception: a-b-c] one\n[misconception: d-e-f] two [misconception: a-b-c]"
    assert named_misconceptions(text) == ("a-b-c", "d-e-f")
    assert named_misconceptions("AssertionError: plain failure") == ()


def test_failure_text_strips_colour_and_includes_stderr():
    cell = cells.test_cell("test_f", 1, "")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="[misconception: not-from-stdout] x"),
        nbformat.v4.new_output("stream", name="stderr", text="warning"),
        nbformat.v4.new_output(
            "error",
            ename="Diagnosis",
            evalue="[misconception: x-y-z] bad",
            traceback=["\x1b[0;31mDiagnosis\x1b[0m: [misconception: \x1b[1mx-y-z\x1b[0m] bad"],
        ),
    ]
    text = failure_text(cell)
    assert "\x1b" not in text and "warning" in text
    assert named_misconceptions(text) == ("x-y-z",)


def test_diagnoses_by_cell_reads_a_graded_notebook(tmp_path):
    failing = cells.test_cell("test_f", 1, "")
    failing.outputs = [
        nbformat.v4.new_output("error", ename="Diagnosis", evalue="[misconception: x-y-z] bad", traceback=[])
    ]
    passing = cells.test_cell("test_g", 1, "")
    path = tmp_path / "graded.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[failing, passing]), path)
    assert diagnoses_by_cell(path) == {"test_f": ("x-y-z",), "test_g": ()}


def test_a_failed_cell_says_its_own_message_on_one_line(tmp_path):
    failing = cells.test_cell("test_f", 1, "")
    failing.outputs = [
        nbformat.v4.new_output(
            "error", ename="Diagnosis", evalue="a tensor built\nhere cannot cross", traceback=["\x1b[0;31mnoise"]
        )
    ]
    warned = cells.test_cell("test_g", 1, "")
    warned.outputs = [nbformat.v4.new_output("stream", name="stderr", text="UserWarning: \x1b[1mnon-leaf\x1b[0m")]
    passing = cells.test_cell("test_h", 1, "")
    path = tmp_path / "graded.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[failing, warned, passing]), path)
    assert failure_messages(path) == {
        "test_f": "Diagnosis: a tensor built here cannot cross",
        "test_g": "UserWarning: non-leaf",
    }
    assert one_line("x" * 50, limit=10) == "xxxxxxx..."
