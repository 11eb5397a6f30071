import functools

import pytest
import torch

from gradekit.core.manifest import Exercise, TestCell
from gradekit.core.notebook_script import parse_script
from gradekit.proof.coverage import (
    FLOATING,
    CallRecord,
    KnownGap,
    coverage,
    coverage_lines,
    coverage_table,
    every_dtype,
    exercise_texts,
    gap_problems,
    input_properties,
    stated_properties,
)

pytestmark = pytest.mark.unit

SCRIPT = """# %% [markdown] md_value
# Write `value(t)`: `t` is a floating tensor of any shape.

# %% answer answer_value
def value(t):
    return t.sum().item()

# %% test test_value points=1
value(1)

# %% [markdown] md_plain
# Write `plain(x)`: it returns x.
#
# | tool | takes |
# | `t.item()` | a one-element tensor (any shape) |

# %% answer answer_plain
def plain(x):
    return x

# %% test test_plain points=1
plain(1)
"""
EXERCISES = (
    Exercise("010_x", "answer_value", ("value",), (TestCell("test_value", 1, ()),)),
    Exercise("010_x", "answer_plain", ("plain",), (TestCell("test_plain", 1, ()),)),
)


def value(t):
    return t


def test_the_text_of_an_exercise_is_what_comes_before_its_answer_cell():
    texts = exercise_texts(parse_script(SCRIPT))
    assert "floating tensor of any shape" in texts["answer_value"]
    assert "floating" not in texts["answer_plain"] and "returns x" in texts["answer_plain"]
    assert "any shape" not in texts["answer_plain"]  # a table row describes a tool, not the inputs


def test_the_phrases_a_text_states_inputs_with():
    phrases, stated = stated_properties("A Floating tensor of any shape, and labels of any integer dtype.")
    assert phrases == ("floating tensor", "any integer dtype", "any shape")
    assert stated[:4] == FLOATING and "int8" in stated and "0-dim" in stated
    assert stated_properties("it returns x") == ((), ())
    assert set(stated_properties("every dtype")[1]) == set(every_dtype()) >= {"float16", "bool", "complex128"}


def test_the_inputs_of_a_call_are_read_through_containers_and_partials():
    found = input_properties(
        ((torch.ones(()), [torch.ones(2, dtype=torch.float16)]), {"d": functools.partial(value, torch.int8)})
    )
    assert found == {"float32", "0-dim", "float16", "1-dim", "int8"}


def test_a_stated_dtype_never_passed_is_a_gap_and_fails_unless_declared():
    record = CallRecord()
    record("test_value", value, (torch.ones(3, dtype=torch.float64),), {})
    record("test_value", value, (torch.ones((), dtype=torch.float32), torch.ones(2, 2)), {})
    (item,) = coverage("010_x", parse_script(SCRIPT), EXERCISES, record)
    assert item.gaps == ("float16", "bfloat16")
    assert "never passed: float16, bfloat16" in coverage_lines([item])[0]
    assert "| float16, bfloat16 |" in coverage_table([item])
    (problem,) = gap_problems([item], [], {"010_x"})
    assert "010_x value: the text says floating tensor, any shape, yet no test cell passes float16, bfloat16" in problem
    declared = KnownGap("010_x", "value", ("float16", "bfloat16"), "being added")
    assert gap_problems([item], [declared], {"010_x"}) == []
    assert "(declared open in solutions/input_gaps.toml: being added)" in coverage_lines([item], [declared])[0]


def test_a_declared_gap_the_tests_close_must_leave_the_list():
    record = CallRecord()
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        record("test_value", value, (torch.ones((), dtype=dtype), torch.ones(1), torch.ones(1, 1)), {})
    (item,) = coverage("010_x", parse_script(SCRIPT), EXERCISES, record)
    assert item.gaps == ()
    declared = KnownGap("010_x", "value", ("float16",), "being added")
    (problem,) = gap_problems([item], [declared], {"010_x"})
    assert "float16 declared never passed" in problem and "remove it there" in problem
    stray = KnownGap("010_x", "plain", ("int8",), "?")
    assert any("plain: a gap is declared" in p for p in gap_problems([item], [stray], {"010_x"}))
    assert gap_problems([item], [stray], {"020_y"}) == []  # a notebook not checked is not judged
