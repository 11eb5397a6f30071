"""Hidden-test lines: which lines are telling, and how they are cut from what a cell shows."""

import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from gradekit.authoring.cells import BEGIN_HIDDEN, END_HIDDEN
from gradekit.grading.hidden_lines import CUT_NOTICE, SHORTEST_SECRET, cut_hidden_lines, hidden_test_lines

pytestmark = pytest.mark.unit

SECRET = "assert_close(scaled(torch.ones(3)), expected_for_seed_1234)"


def test_only_long_lines_between_the_markers_are_telling():
    short = "x" * (SHORTEST_SECRET - 1)
    source = "\n".join(
        ["visible_line_that_is_long_enough_to_count()", BEGIN_HIDDEN, f"    {SECRET}", short, END_HIDDEN]
    )
    assert hidden_test_lines(new_notebook(cells=[new_code_cell(source)])) == {SECRET}


def test_a_telling_line_is_cut_from_streams_messages_and_text_data_but_not_tracebacks():
    cell = new_code_cell("print()")
    cell.outputs = [
        new_output("stream", name="stdout", text=f"before\n{SECRET}\nafter\n"),
        new_output("error", ename="ValueError", evalue=f"saw {SECRET}", traceback=[SECRET]),
        new_output("execute_result", data={"text/plain": SECRET, "image/png": SECRET}, execution_count=1),
    ]
    assert cut_hidden_lines(cell, {SECRET}) is True
    assert cell.outputs[0]["text"] == f"before\n{CUT_NOTICE}\nafter\n"
    assert cell.outputs[1]["evalue"] == f"{CUT_NOTICE}\n"
    assert cell.outputs[1]["traceback"] == [SECRET]
    assert cell.outputs[2]["data"] == {"text/plain": f"{CUT_NOTICE}\n", "image/png": SECRET}


def test_an_output_without_a_telling_line_is_left_as_it_was():
    cell = new_code_cell("print()")
    cell.outputs = [new_output("stream", name="stdout", text="nothing hidden here\n")]
    assert cut_hidden_lines(cell, {SECRET}) is False
    assert cell.outputs[0]["text"] == "nothing hidden here\n"
