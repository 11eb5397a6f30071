"""Output limits: characters of text, bytes of every MIME type per output and per notebook."""

import nbformat
import pytest
from traitlets.config import Config

from gradekit.grading.output_limits import (
    CUT_BY_THE_GRADER,
    ENTRY_BYTES,
    LimitOutputSize,
    OutputBudget,
    admitted,
    output_bytes,
)

pytestmark = pytest.mark.unit


def _cell(*outputs):
    cell = nbformat.v4.new_code_cell("pass", outputs=list(outputs))
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_x", "points": 1}
    return cell


def _run(preprocessor, cell):
    return preprocessor.preprocess_cell(cell, {}, 0)[0]


def _image(size):
    return nbformat.v4.new_output("display_data", data={"image/png": "i" * size})


def test_long_text_outputs_are_cut_with_a_note_and_stderr_stays_stderr():
    limit = LimitOutputSize(config=Config({"LimitOutputSize": {"max_characters": 10}}))
    stderr = nbformat.v4.new_output("stream", name="stderr", text="e" * 25)
    html = nbformat.v4.new_output("display_data", data={"text/html": "h" * 12, "image/png": "i" * 50})
    cell = _run(limit, _cell(stderr, html))
    assert cell.outputs[0].name == "stderr"
    assert cell.outputs[0].text == "e" * 10 + "\n... [15 more characters cut by the grader]\n"
    assert cell.outputs[1].data["text/html"].startswith("h" * 10 + "\n... [2 more")
    assert cell.outputs[1].data["image/png"] == "i" * 50  # within the byte budget, an image is kept whole


def test_short_outputs_are_left_alone():
    stdout = nbformat.v4.new_output("stream", name="stdout", text="fine\n")
    assert _run(LimitOutputSize(), _cell(stdout)).outputs[0].text == "fine\n"


def test_an_image_past_the_output_budget_is_replaced_by_a_note_that_says_so():
    limit = LimitOutputSize(config=Config({"LimitOutputSize": {"max_output_bytes": 1000}}))
    cell = _run(limit, _cell(_image(5000), _image(10)))
    assert list(cell.outputs[0].data) == ["text/plain"]
    assert "image/png) of 5,000 bytes " + CUT_BY_THE_GRADER in cell.outputs[0].data["text/plain"]
    assert cell.outputs[1].data["image/png"] == "i" * 10


@pytest.mark.parametrize(
    "data",
    [{"text/html": "<p>" + "h" * 3000}, {"application/json": {"blob": "j" * 3000}}, {"image/svg+xml": "s" * 3000}],
)
def test_every_mime_type_is_measured_by_its_bytes(data):
    budget = OutputBudget(per_output=1000, per_notebook=10_000)
    kept = admitted(budget, [nbformat.v4.new_output("display_data", data=data)])
    assert CUT_BY_THE_GRADER in kept[0].data["text/plain"] and output_bytes(kept[0]) < 1000


def test_the_notebook_budget_holds_across_cells_and_a_flood_leaves_one_note():
    limit = LimitOutputSize(config=Config({"LimitOutputSize": {"max_output_bytes": 1000, "max_notebook_bytes": 2500}}))
    notebook = nbformat.v4.new_notebook(cells=[_cell(*[_image(900) for _ in range(10)]) for _ in range(2)])
    graded, _ = limit.preprocess(notebook, {})
    first, second = (cell.outputs for cell in graded.cells)
    assert [output.data.get("image/png") is not None for output in first] == [True, True, False]
    assert len(second) == 1 and CUT_BY_THE_GRADER in second[0].data["text/plain"]
    assert sum(output_bytes(output) for cell in graded.cells for output in cell.outputs) < 2500 + 1000


def test_a_flood_of_empty_outputs_is_held_to_the_notebook_budget_by_their_entries():
    budget = OutputBudget(per_output=1000, per_notebook=10_000)
    empty = [nbformat.v4.new_output("display_data", data={"text/plain": ""}) for _ in range(20_000)]
    kept = admitted(budget, empty)
    assert len(kept) == 10_000 // ENTRY_BYTES + 1 and CUT_BY_THE_GRADER in kept[-1].data["text/plain"]


def test_copies_of_an_output_count_once_each_against_the_notebook_and_alone_against_an_output():
    budget = OutputBudget(per_output=1000, per_notebook=10_000)
    assert not budget.take(600, copies=20) and budget.kept == 0  # 12,000 bytes in all: past the notebook's
    assert budget.take(600, copies=10) and budget.kept == 6000  # each within an output's 1,000
    assert not budget.take(1200, copies=1)


def test_a_cut_stream_keeps_its_name_and_its_head():
    budget = OutputBudget(per_output=400, per_notebook=10_000)
    stderr = nbformat.v4.new_output("stream", name="stderr", text="warning " * 200)
    (kept,) = admitted(budget, [stderr])
    assert kept.name == "stderr" and kept.text.startswith("warning warning") and CUT_BY_THE_GRADER in kept.text


def test_an_error_is_kept_cut_short_even_past_the_notebook_budget():
    """nbgrader scores a test cell zero for an error: dropping one would give its points away."""
    budget = OutputBudget(per_output=1000, per_notebook=1000)
    error = nbformat.v4.new_output("error", ename="Diagnosis", evalue="e" * 5000, traceback=["t" * 5000])
    kept = admitted(budget, [_image(999), error, error])
    assert [output.output_type for output in kept] == ["display_data", "error"]
    assert kept[1].ename == "Diagnosis" and CUT_BY_THE_GRADER in kept[1].evalue


def test_a_notebook_within_its_budget_is_left_alone():
    budget = OutputBudget(per_output=1000, per_notebook=10_000)
    outputs = [_image(500), nbformat.v4.new_output("stream", name="stdout", text="fine\n")]
    assert admitted(budget, outputs) == outputs
