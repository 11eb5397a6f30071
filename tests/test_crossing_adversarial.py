"""Replies a hostile kernel writes by hand: each is refused or read within the decoder's budgets.

The kernel's half of the wire is the student's to replace, so a reply can hold
any structure `torch.save` can write: tuples that share their children (one
pickle memo entry reached again and again), nesting thousands deep, tensors
that declare huge shapes or strides that alias, storages that claim more bytes
than they bring. Whatever is drawn, reading it ends with the value or with a
`CrossingError`, having visited at most the budget's nodes and held little memory.
"""

import sys
import time
import tracemalloc

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradekit.sandbox import crossing
from gradekit.sandbox.crossing import TOO_LARGE, CrossingError, Mirror

pytestmark = pytest.mark.unit

PEAK_BYTES = 256 * 2**20  # what reading any drawn reply may hold at once, far below what the attacks asked for


def _reply(body, storages=()):
    """A reply as a hostile kernel would write it: the wire's own archive, any tree inside.

    Writing a deep tree takes a deep stack here (the kernel could write the pickle's bytes by hand).
    """
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, 20_000))
    try:
        return _dumped(body, storages)
    finally:
        sys.setrecursionlimit(previous)


def _dumped(body, storages):
    return Mirror("kernel").dumps({"updates": [], "body": ("tuple", (("v", "returned"), body))}, list(storages))


def _shared_tuples(depth, fan_out=2):
    """`depth` levels of tuples whose `fan_out` children are one and the same node: fan_out ** depth visits."""
    node = ("v", 1)
    for _ in range(depth):
        node = ("tuple", (node,) * fan_out)
    return node


def _nested(depth):
    node = ("v", 1)
    for _ in range(depth):
        node = ("tuple", (node,))
    return node


def _tensor_node(size, stride, nbytes, brought):
    facts = {
        "storage": ("k-storage", 0 if brought else -1, nbytes),
        "dtype": "float32",
        "size": size,
        "stride": stride,
        "offset": 0,
        "version": 0,
        "requires_grad": False,
        "is_leaf": True,
        "grad_fn": None,
        "grad": None,
        "retains_grad": False,
        "conj": False,
        "neg": False,
    }
    return ("tensor", "k-tensor", facts)


def _read_within_budget(reply):
    """Read `reply` on a fresh grader: the value, or the CrossingError; with the peak memory it took."""
    grader = Mirror("grader")
    tracemalloc.start()
    try:
        try:
            outcome = grader.incoming(reply)
        except CrossingError as error:
            outcome = error
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert grader.decoded_nodes <= crossing.MAX_MESSAGE_NODES + 1
    return outcome, peak


def test_a_reply_of_tuples_sharing_their_children_64_deep_is_refused_as_too_large():
    """2^64 visits if walked: the budget stops the walk at its first excess."""
    outcome, peak = _read_within_budget(_reply(_shared_tuples(64)))
    assert isinstance(outcome, CrossingError) and str(outcome).startswith(TOO_LARGE)
    assert peak < PEAK_BYTES


def test_a_shared_subtree_within_the_budget_is_read_whole():
    outcome, _ = _read_within_budget(_reply(_shared_tuples(10)))
    assert outcome[1] == _expanded(10)


def _expanded(depth):
    value = 1
    for _ in range(depth):
        value = (value, value)
    return value


def test_nesting_deeper_than_the_budget_is_refused_before_the_stack_runs_out():
    outcome, _ = _read_within_budget(_reply(_nested(3000)))
    assert isinstance(outcome, CrossingError) and "nest more than" in str(outcome)


def test_a_structure_bigger_than_its_cap_is_refused_before_it_is_unpickled(monkeypatch):
    monkeypatch.setattr(crossing, "MAX_STRUCTURE_BYTES", 10_000)
    with pytest.raises(CrossingError, match=f"{TOO_LARGE}: its structure declares"):
        Mirror("grader").incoming(_reply(("list", None, [("v", n) for n in range(5000)])))


def test_the_notebooks_replies_share_one_node_budget(monkeypatch):
    monkeypatch.setattr(crossing, "MAX_NOTEBOOK_NODES", 50)
    grader = Mirror("grader")
    grader.incoming(_reply(("tuple", [("v", n) for n in range(30)])))
    with pytest.raises(CrossingError, match="this notebook's replies passed 50 values"):
        grader.incoming(_reply(("tuple", [("v", n) for n in range(30)])))


def test_reading_stops_at_the_calls_time_limit():
    grader = Mirror("grader")
    grader.deadline = time.monotonic() - 1  # the call's limit has already passed
    with pytest.raises(CrossingError, match="ran past the call's time limit"):
        grader.incoming(_reply(("tuple", [("v", n) for n in range(5000)])))
    grader.incoming(_reply(("tuple", [("v", n) for n in range(10)])))  # a small reply is never looked at twice


HUGE = st.integers(min_value=2**31, max_value=2**62)
SIZES = st.lists(st.one_of(st.integers(0, 8), HUGE, st.integers(-3, -1)), min_size=0, max_size=40)
STRIDES = st.lists(st.one_of(st.integers(-4, 4), HUGE), min_size=0, max_size=40)
HOSTILE = st.one_of(
    st.builds(_shared_tuples, st.integers(1, 80), st.integers(1, 6)),
    st.builds(_nested, st.integers(1, 3000)),
    st.builds(
        lambda size, stride, nbytes, brought: _tensor_node(size, stride, nbytes, brought),
        SIZES,
        STRIDES,
        st.one_of(st.integers(0, 64), HUGE, st.integers(-5, -1)),
        st.booleans(),
    ),
    st.builds(lambda count: ("list", None, [("v", 0)] * count), st.integers(0, 300_000)),
    st.builds(lambda count: ("dict", None, [(("v", n), ("v", n)) for n in range(count)]), st.integers(0, 3000)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(HOSTILE)
def test_every_hostile_reply_is_refused_or_read_within_the_budgets(body):
    storages = [torch.zeros(64, dtype=torch.uint8)]
    outcome, peak = _read_within_budget(_reply(body, storages))
    assert peak < PEAK_BYTES
    if isinstance(outcome, CrossingError):
        return
    assert outcome[0] == "returned"
