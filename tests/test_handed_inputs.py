"""A change the student's code made to a tensor the test handed it in that call is their mistake; any other stays a finding."""

import pytest
import torch
from test_crossing import Loopback

from gradekit.grading.handed_inputs import SEARCH_DEPTH, take_changes_to_arguments, tensors_in

pytestmark = pytest.mark.unit


def test_the_tensors_of_an_argument_are_found_in_lists_tuples_and_dict_values_down_to_the_depth():
    a, b, c = torch.zeros(1), torch.ones(1), torch.full((1,), 2.0)
    found = tensors_in(((a, [b]), {"key": c, "other": "text"}, 3))
    assert [id(t) for t in found] == [id(a), id(b), id(c)]
    assert tensors_in({"deep": [[[a]]]}, depth=SEARCH_DEPTH) == []  # four levels down: not searched
    assert tensors_in("not a tensor") == []


def _call(loop, name, *args):
    """Call the kernel's `name`; return how many refusals the grader held before the call."""
    since = len(loop.grader.refusals)
    loop.answer(name)(*args)
    return since


def test_a_handed_tensor_switched_to_requires_grad_is_the_calls_change_and_leaves_no_finding():
    loop = Loopback({"track": lambda x: x.requires_grad_()})
    x = torch.ones(2)
    since = _call(loop, "track", x)
    assert loop.grader.refused == ["the requires_grad of a tensor the test made"]
    assert take_changes_to_arguments(loop.grader, since, ((x,), {})) == ["requires_grad"]
    assert loop.grader.refused == [] and loop.grader.refusals == []


def test_a_handed_tensor_updated_in_place_is_the_calls_change():
    def update(parameters):
        parameters["w"].add_(1.0)

    loop = Loopback({"update": update})
    w = torch.zeros(3)
    since = _call(loop, "update", {"w": w})
    assert take_changes_to_arguments(loop.grader, since, (({"w": w},), {})) == ["values"]
    assert loop.grader.refused == []


def test_a_change_to_a_tensor_the_call_never_handed_over_stays_a_finding():
    kept = {}
    loop = Loopback({"keep": lambda t: kept.setdefault("t", t) is None, "poke": lambda u: kept["t"].add_(1.0)})
    earlier, handed = torch.zeros(2), torch.ones(2)
    _call(loop, "keep", earlier)
    since = _call(loop, "poke", handed)
    assert take_changes_to_arguments(loop.grader, since, ((handed,), {})) == []
    assert loop.grader.refused == ["the values of a tensor the test made"]
