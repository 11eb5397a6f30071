"""Every value an honest answer can return crosses the wire and arrives equal (property-based).

The values are drawn from what the lesson's APIs return: tensors of every
dtype from `torch.tensor`, `torch.randn` and `torch.randint` with seeded
generators, views of them (transposes, slices, expansions, 0-dim picks,
conjugate and negative views), `detach()`, results made under
`torch.inference_mode()` or `torch.no_grad()`, tensors that require grad or
carry a graph, Python scalars, and containers of all of these (builtins and
their subclasses: OrderedDict, defaultdict, namedtuple, torch's return types).
Each one goes through the same encode and decode the kernel and the grader
use (`answer_server.respond` between two `Mirror`s) and must arrive as the
module docstring of crossing.py says: same dtype, shape, strides and bits;
containers as their plain builtin kind.
"""

import collections
import math
import struct

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradekit.grading.sealed_checks import RemoteAnswer
from gradekit.sandbox import crossing
from gradekit.sandbox.answer_server import respond
from gradekit.sandbox.crossing import Mirror

pytestmark = pytest.mark.unit

FLOATING = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
EIGHT_BIT_FLOATS = (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)
COMPLEX = (torch.complex64, torch.complex128)
INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16, torch.uint32, torch.uint64)
DTYPES = (torch.bool, *INTEGERS, *FLOATING, *EIGHT_BIT_FLOATS, *COMPLEX)
VIEWS = ("none", "transpose", "every_other", "expand", "pick", "narrow", "conj", "neg", "imag")
MODES = ("plain", "detach", "inference_mode", "no_grad", "leaf_requires_grad", "graph")

Pair = collections.namedtuple("Pair", "first second")


class StudentList(list):
    pass


class StudentDict(dict):
    pass


def _made(dtype, shape, seed):
    """A tensor of `dtype` from the lesson's constructors, drawn with a seeded generator."""
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randn(shape, generator=generator) > 0
    if dtype in INTEGERS:
        low, high = (0, 200) if dtype in (torch.uint8, torch.uint16, torch.uint32, torch.uint64) else (-100, 100)
        return torch.randint(low, high, shape, generator=generator, dtype=torch.int64).to(dtype)
    if dtype in COMPLEX:
        return torch.randn(shape, generator=generator, dtype=dtype)
    return torch.randn(shape, generator=generator, dtype=torch.float64).to(dtype)


def _viewed(tensor, view):
    """One of the views the lesson's code makes; a view that does not apply leaves the tensor as it is."""
    if view == "transpose" and tensor.dim() >= 2:
        return tensor.t() if tensor.dim() == 2 else tensor.transpose(0, -1)
    if view == "every_other" and tensor.dim() >= 1:
        return tensor[::2]
    if view == "expand" and tensor.dim() >= 1 and tensor.shape[0] == 1:
        return tensor.expand(3, *tensor.shape[1:])
    if view == "pick" and tensor.dim() >= 1 and tensor.numel() > 0:
        return tensor[(0,) * tensor.dim()]  # a 0-dim view
    if view == "narrow" and tensor.dim() >= 1 and tensor.shape[-1] > 1:
        return tensor.narrow(-1, 1, tensor.shape[-1] - 1)
    if view == "conj" and tensor.is_complex():
        return tensor.conj()
    if view == "imag" and tensor.is_complex():
        return tensor.conj().imag  # a negative view of the conjugate's imaginary part
    if view == "neg" and tensor.dtype in (torch.float32, torch.float64):
        return tensor._neg_view()
    return tensor


def _in_mode(dtype, shape, seed, view, mode):
    """The tensor an answer would return, made as `mode` says (grad modes, detach, a graph)."""
    differentiable = dtype in (torch.float32, torch.float64, *COMPLEX)
    if mode == "inference_mode":
        with torch.inference_mode():
            return _viewed(_made(dtype, shape, seed), view)
    if mode == "no_grad":
        with torch.no_grad():
            return _viewed(_made(dtype, shape, seed), view)
    if mode == "detach":
        return _viewed(_made(dtype, shape, seed), view).detach()
    if mode == "leaf_requires_grad" and differentiable and view not in ("conj", "neg", "imag"):
        return _made(dtype, shape, seed).requires_grad_()
    if mode == "graph" and differentiable:
        leaf = _made(dtype, shape, seed).requires_grad_()
        return _viewed(leaf * 2, view)
    return _viewed(_made(dtype, shape, seed), view)


tensors = st.builds(
    _in_mode,
    st.sampled_from(DTYPES),
    st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple),
    st.integers(0, 2**16),
    st.sampled_from(VIEWS),
    st.sampled_from(MODES),
)
scalars = (
    st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.complex_numbers(allow_nan=True, allow_infinity=True)
    | st.none()
    | st.text(max_size=4)
)
keys = st.text(max_size=3) | st.integers(-5, 5)


def _return_type(values):
    """What torch.max(t, dim=0) returns: a namedtuple-like of torch's own."""
    return torch.max(torch.tensor(values, dtype=torch.float64), dim=0)


def _containers(children):
    pairs = st.lists(st.tuples(keys, children), max_size=3)
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(StudentList),
        st.lists(children, max_size=3).map(tuple),
        st.tuples(children, children).map(lambda both: Pair(*both)),
        pairs.map(dict),
        pairs.map(StudentDict),
        pairs.map(collections.OrderedDict),
        pairs.map(lambda items: collections.defaultdict(list, items)),
        st.frozensets(st.integers(-3, 3) | st.text(max_size=2), max_size=3),
        st.sets(st.integers(-3, 3), max_size=3),
        st.lists(st.floats(-10, 10), min_size=1, max_size=3).map(_return_type),
    )


answers = st.recursive(tensors | scalars, _containers, max_leaves=6)


def _round_trip(value):
    """`value` returned by an answer in a kernel mirror, as the grader's mirror receives it."""
    kernel = Mirror("kernel", resolve_answer=lambda name: lambda: value)
    grader = Mirror("grader")

    def call(target, args, kwargs):
        request = crossing.call_message(grader, target, args, kwargs)
        reply = grader.incoming(respond(kernel, request, vars(crossing)))
        return crossing.result_of(crossing.checked_reply(reply))

    grader._call = call
    return RemoteAnswer("answer", grader)()


def _bits(tensor):
    """Every byte of a tensor's values as they read (lazy conjugation and negation resolved)."""
    plain = tensor.detach().resolve_conj().resolve_neg().reshape(-1).contiguous()
    return plain.view(torch.uint8).tolist()


def _same_number(a, b):
    if isinstance(a, complex):
        return _same_number(a.real, b.real) and _same_number(a.imag, b.imag)
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


def assert_arrives_as_sent(sent, got):
    if isinstance(sent, torch.Tensor):
        assert type(got) is torch.Tensor  # a plain tensor, whatever mode made it
        assert (got.dtype, got.shape, got.stride()) == (sent.dtype, sent.shape, sent.stride())
        assert _bits(got) == _bits(sent)
        assert (got.is_conj(), got.is_neg()) == (sent.is_conj(), sent.is_neg())
        assert (got.requires_grad, got.is_leaf) == (sent.requires_grad, sent.is_leaf)
        assert type(got.grad_fn).__name__ == type(sent.grad_fn).__name__
        assert not got.is_inference()
        return
    if isinstance(sent, bool) or sent is None:
        assert got is sent
        return
    for base in (int, float, complex, str):
        if isinstance(sent, base):
            assert type(got) is base and _same_number(sent, got)
            return
    for base in (tuple, list, frozenset, set):  # namedtuples and torch's return types arrive as tuples
        if isinstance(sent, base) and base in (frozenset, set):
            assert type(got) is base and got == base(sent)
            return
        if isinstance(sent, base):
            assert type(got) is base and len(got) == len(sent)
            for item_sent, item_got in zip(base.__iter__(sent), got):
                assert_arrives_as_sent(item_sent, item_got)
            return
    assert isinstance(sent, dict)  # OrderedDict, defaultdict and the student's own arrive as dicts
    assert type(got) is dict and list(got) == list(dict.keys(sent))
    for key, item in dict.items(sent):
        assert_arrives_as_sent(item, got[key])


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(answers)
def test_every_value_an_honest_answer_returns_arrives_as_it_was_sent(value):
    assert_arrives_as_sent(value, _round_trip(value))
    assert_arrives_as_sent(value, crossing.delivered(value))  # the round trip `gradekit check` makes


def test_an_inference_tensor_crosses_and_the_kernel_keeps_answering():
    with torch.inference_mode():
        made = torch.arange(6.0, dtype=torch.float64).reshape(2, 3) * 2
    kernel = Mirror("kernel", resolve_answer=lambda name: {"make": lambda: made, "twice": lambda t: t * 2}[name])
    grader = Mirror("grader")

    def call(target, args, kwargs):
        request = crossing.call_message(grader, target, args, kwargs)
        return crossing.result_of(crossing.checked_reply(grader.incoming(respond(kernel, request, vars(crossing)))))

    grader._call = call
    got = RemoteAnswer("make", grader)()
    assert got.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]] and not got.is_inference()
    again = RemoteAnswer("twice", grader)(got)  # the kernel's own inference tensor, passed back by handle
    assert again.tolist() == [[0.0, 4.0, 8.0], [12.0, 16.0, 20.0]]


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's notes on sparse CSR and quantized tensors
@pytest.mark.parametrize(
    "make, what",
    [
        (lambda: torch.tensor([[0.0, 1.5]]).to_sparse(), "layout torch.sparse_coo"),
        (lambda: torch.tensor([[0.0, 1.5]]).to_sparse_csr(), "layout torch.sparse_csr"),
        (lambda: torch.quantize_per_tensor(torch.tensor([1.0]), 0.1, 0, torch.qint8), "quantized tensor"),
        (lambda: [1, {"deep": torch.ones(2, device="meta")}], "device meta"),
    ],
)
def test_a_value_the_wire_does_not_carry_is_refused_as_the_students_error_with_the_reason(make, what):
    with pytest.raises(TypeError, match="cannot cross") as refused:
        _round_trip(make())
    assert type(refused.value).__name__ == crossing.REFUSAL_TYPE and refused.value.raised_in_student_process
    assert what in str(refused.value) and "dense CPU tensors" in str(refused.value)


def test_a_refused_value_leaves_the_kernel_able_to_answer_the_next_call():
    answers_by_name = {"sparse": lambda: [torch.ones(3), torch.ones(2).to_sparse()], "dense": lambda: torch.ones(2)}
    kernel = Mirror("kernel", resolve_answer=answers_by_name.__getitem__)
    grader = Mirror("grader")

    def call(target, args, kwargs):
        request = crossing.call_message(grader, target, args, kwargs)
        return crossing.result_of(crossing.checked_reply(grader.incoming(respond(kernel, request, vars(crossing)))))

    grader._call = call
    with pytest.raises(TypeError, match="cannot cross"):
        RemoteAnswer("sparse", grader)()
    assert kernel.objects == {} and kernel.storages == {}  # nothing half-sent stays paired
    assert RemoteAnswer("dense", grader)().tolist() == [1.0, 1.0]


def test_nan_and_signed_zero_keep_their_bits():
    got = _round_trip([float("nan"), -0.0, complex(-0.0, math.inf)])
    assert math.isnan(got[0]) and math.copysign(1.0, got[1]) == -1.0 and got[2] == complex(-0.0, math.inf)
