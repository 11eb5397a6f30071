import functools

import nbformat
import pytest

from gradekit.authoring import cells
from gradekit.authoring.cells import (
    BEGIN_SOLUTION,
    END_SOLUTION,
    answer_cell,
    answer_source,
    function_source,
    stub_solutions,
)
from gradekit.core.cell_ids import cells_by_grade_id

pytestmark = pytest.mark.unit


def _marked(flag):
    def mark(function):
        function.flag = flag
        return function

    return mark


def documented(values, scale=2):
    """Scale the values.

    Two lines of docstring.
    """
    doubled = [v * scale for v in values]
    return doubled


@_marked("x")
def decorated__variant(values):
    return list(values)


def negative_control(misconception):  # named like the kit's mark, which an answer cell never shows
    return _marked(misconception)


@negative_control("some-misconception")
@functools.lru_cache(maxsize=None)
def cached__variant(count):
    return count + 1


def test_answer_source_puts_the_body_between_solution_markers():
    lines = answer_source(documented).splitlines()
    assert lines[0] == "def documented(values, scale=2):"
    assert lines[4] == '    """'
    assert lines[5] == "    " + BEGIN_SOLUTION
    assert lines[6:8] == ["    doubled = [v * scale for v in values]", "    return doubled"]
    assert lines[8] == "    " + END_SOLUTION


def test_function_source_keeps_the_answers_decorators_drops_the_kits_marks_and_renames():
    source = function_source(decorated__variant, name="decorated")
    assert source.splitlines() == ['@_marked("x")', "def decorated(values):", "    return list(values)"]
    source = function_source(cached__variant, name="cached")
    assert source.splitlines()[:2] == ["@functools.lru_cache(maxsize=None)", "def cached(count):"]
    namespace = {"functools": functools}
    exec(source, namespace)
    assert namespace["cached"](1) == 2 and namespace["cached"].cache_info().currsize == 1


def test_answer_and_test_cells_carry_nbgrader_metadata():
    answer = answer_cell("answer_f", "def f():\n    pass")
    test = cells.test_cell("test_f", 3, "assert True")
    assert answer.metadata.nbgrader["solution"] and not answer.metadata.nbgrader["grade"]
    assert test.metadata.nbgrader["grade"] and test.metadata.nbgrader["locked"]
    assert test.metadata.nbgrader["points"] == 3
    notebook = nbformat.v4.new_notebook(cells=[answer, test])
    assert set(cells_by_grade_id(notebook)) == {"answer_f", "test_f"}


def test_stub_solutions_replaces_each_region_with_the_indented_stub():
    stubbed = stub_solutions(answer_source(documented), "# YOUR CODE HERE\nraise NotImplementedError()")
    assert stubbed.splitlines()[-2:] == ["    # YOUR CODE HERE", "    raise NotImplementedError()"]
    assert BEGIN_SOLUTION not in stubbed and "doubled" not in stubbed
