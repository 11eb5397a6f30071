"""The wire between grader and kernel, with both mirrors in this process (no kernel needed)."""

import fractions
import functools
import importlib.util
import io
import operator
import pickle
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import load_checks_module

from gradekit.sandbox import crossing
from gradekit.sandbox.answer_server import respond
from gradekit.sandbox.crossing import CrossingError, Mirror, RemoteObject

pytestmark = pytest.mark.unit


class Loopback:
    """A grader mirror whose calls are answered by a kernel mirror over `namespace`."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.kernel = Mirror("kernel", resolve_answer=self._answer)
        self.grader = Mirror("grader", call=self._call)

    def _answer(self, name):
        return self.namespace[name]

    def _call(self, target, args, kwargs):
        request = crossing.call_message(self.grader, target, args, kwargs)
        return crossing.result_of(
            crossing.checked_reply(self.grader.incoming(respond(self.kernel, request, vars(crossing))))
        )

    def answer(self, name):
        from gradekit.grading.sealed_checks import RemoteAnswer

        return RemoteAnswer(name, self.grader)


def test_a_leaf_comes_back_as_a_leaf_and_a_copy_not_the_callers_object():
    loop = Loopback({"make": lambda values: torch.tensor(values, dtype=torch.float64, requires_grad=True)})
    leaf = loop.answer("make")([1.0, 2.0])
    assert type(leaf) is torch.Tensor and leaf.is_leaf and leaf.requires_grad and leaf.dtype == torch.float64
    assert leaf.tolist() == [1.0, 2.0]


def test_a_non_leaf_keeps_its_facts_and_refuses_backward_here():
    loop = Loopback({"make": lambda: torch.ones(2, requires_grad=True) * 3})
    made = loop.answer("make")()
    assert made.requires_grad and not made.is_leaf and type(made.grad_fn).__name__ == "MulBackward0"
    with pytest.raises(RuntimeError, match="student's kernel"):
        made.sum().backward()


def test_backward_in_the_kernel_fills_the_callers_grad_and_identity_survives():
    def grad_of_square_sum(x):
        (x * x).sum().backward()
        return x.grad

    loop = Loopback({"f": grad_of_square_sum})
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    result = loop.answer("f")(x)
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert result is x.grad


def test_in_place_updates_and_versions_come_back():
    def step(params, lr):
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
        return None

    loop = Loopback({"step": step})
    w = torch.ones(3, requires_grad=True)
    w.grad = torch.full((3,), 2.0)
    before = w._version
    pointer = w.data_ptr()
    loop.grader.allow_changes([w])
    loop.answer("step")([w], 0.5)
    assert w.tolist() == [0.0, 0.0, 0.0]
    assert w._version == before + 1
    assert w.data_ptr() == pointer
    assert loop.grader.refused == []


def test_a_grad_set_here_before_the_call_reaches_the_kernel():
    seen = []
    loop = Loopback({"look": lambda t: seen.append(t.grad.tolist())})
    w = torch.zeros(2, requires_grad=True)
    w.grad = torch.ones(2)
    loop.answer("look")(w)
    w.grad = torch.full((2,), 5.0)
    loop.answer("look")(w)
    assert seen == [[1.0, 1.0], [5.0, 5.0]]


def test_storage_sharing_with_an_argument_is_visible_here():
    loop = Loopback({"alias": lambda t: t.detach(), "copy": lambda t: t.detach().clone()})
    x = torch.arange(4.0, requires_grad=True)
    assert loop.answer("alias")(x).untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert loop.answer("copy")(x).untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def test_numpy_arrays_cross_and_share_memory_as_they_did_there():
    loop = Loopback({"view": lambda t: t.detach().numpy(), "copy": lambda t: t.detach().numpy().copy()})
    x = torch.arange(3.0)
    shared = loop.answer("view")(x)
    assert isinstance(shared, np.ndarray) and np.shares_memory(shared, x.numpy())
    assert not np.shares_memory(loop.answer("copy")(x), x.numpy())
    again = loop.answer("view")(x)
    assert np.shares_memory(again, x.numpy())


def _poked_through_numpy():
    """A kernel namespace whose `poke` writes through a NumPy view, past the tensor's version counter."""
    kept = {}

    def make():
        kept["tensor"] = torch.zeros(4)
        return kept["tensor"]

    def poke(value):
        kept["tensor"].numpy()[1] = value

    return {"make": make, "poke": poke}


def _nothing_pending(loop):
    return crossing._Encoder(loop.grader).changes() == [] and crossing._Encoder(loop.kernel).changes() == []


@pytest.mark.parametrize("copied_bytes", [crossing.SNAPSHOT_BYTES, 0], ids=["compared-with-copies", "hashed"])
def test_a_write_no_version_counter_sees_crosses_and_an_unchanged_storage_does_not(monkeypatch, copied_bytes):
    monkeypatch.setattr(crossing, "SNAPSHOT_BYTES", copied_bytes)
    loop = Loopback(_poked_through_numpy())
    made = loop.answer("make")()
    assert _nothing_pending(loop)
    loop.answer("poke")(5.0)
    assert made.tolist() == [0.0, 5.0, 0.0, 0.0]
    assert _nothing_pending(loop)


def test_storages_agreed_as_copies_stay_agreed_once_they_are_hashed(monkeypatch):
    """Past the copies' budget a storage agreed by its copy is checked against that copy: no bytes travel for nothing."""
    loop = Loopback(_poked_through_numpy())
    made = loop.answer("make")()
    monkeypatch.setattr(crossing, "SNAPSHOT_BYTES", 0)
    assert _nothing_pending(loop)
    loop.answer("poke")(7.0)
    assert made.tolist() == [0.0, 7.0, 0.0, 0.0]
    assert _nothing_pending(loop)


def test_lists_passed_in_are_kept_in_step():
    loop = Loopback({"fill": lambda items: items.extend([1, 2])})
    items = []
    loop.answer("fill")(items)
    assert items == [1, 2]


SECRET = "a constant only the hidden test holds"


def test_a_function_of_the_test_is_refused_before_anything_is_sent():
    ran = []
    loop = Loopback({"apply": lambda f, t: ran.append(f)})

    def watched(t):
        return (t * t).sum() if SECRET else t

    for function in (watched, lambda t: SECRET, functools.partial(watched), [watched]):
        with pytest.raises(CrossingError) as refused:
            crossing.call_message(loop.grader, loop.answer("apply"), (function, torch.ones(2)), {})
        assert "cannot reach the student's kernel" in str(refused.value)
        assert "autograd_checks.py" in str(refused.value) and SECRET not in str(refused.value)
    with pytest.raises(CrossingError, match="'watched'"):
        loop.answer("apply")(watched, torch.ones(2))
    assert ran == []  # the request was refused while it was written: the kernel ran nothing


def test_torch_functions_and_the_public_modules_cross_by_name_with_data(monkeypatch):
    public = _public_module()
    monkeypatch.setitem(sys.modules, "autograd_checks", public)
    loop = Loopback({"apply": lambda f, t: f(t)})
    calls = []
    noted = functools.partial(public.noting_calls, public.sum_of_squares, calls)
    assert loop.answer("apply")(noted, torch.ones(2, requires_grad=True)).item() == 2.0
    assert calls == [True]
    assert loop.answer("apply")(torch.sin, torch.zeros(1)).tolist() == [0.0]
    made_inside = public.call_watched.__globals__["functools"].partial(lambda t: t)
    with pytest.raises(CrossingError, match="cannot reach"):
        loop.answer("apply")(made_inside, torch.zeros(1))


def _public_module():
    """The course's public module under its own name, as the kernel imports it."""
    path = Path(__file__).resolve().parent.parent / "source" / "autograd" / "autograd_checks.py"
    spec = importlib.util.spec_from_file_location("autograd_checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_objects_stay_in_the_kernel_behind_handles():
    loop = Loopback({"model": lambda: torch.nn.Linear(2, 1), "run": lambda m, x: m(x)})
    model = loop.answer("model")()
    assert isinstance(model, RemoteObject)
    assert loop.answer("run")(model, torch.ones(1, 2)).shape == (1, 1)
    assert model.in_features == 2


def test_the_students_exception_crosses_as_type_name_and_message_only():
    class OddError(ValueError):
        pass

    def fails():
        raise OddError("bad input")

    loop = Loopback({"fails": fails})
    with pytest.raises(ValueError) as caught:
        loop.answer("fails")()
    assert type(caught.value).__name__ == "OddError" and str(caught.value) == "bad input"
    assert caught.value.raised_in_student_process


@pytest.mark.parametrize("name", sorted(crossing.KIT_VERDICT_NAMES))
def test_an_exception_named_like_a_checks_verdict_crosses_under_its_built_in_name(name):
    # A student's own `class Diagnosis(AssertionError)` must not pass for the checks' words.
    impostor = type(name, (AssertionError,), {})

    def fails():
        raise impostor("[misconception: none] a guessed line")

    loop = Loopback({"fails": fails})
    with pytest.raises(AssertionError) as caught:
        loop.answer("fails")()
    assert type(caught.value).__name__ == "AssertionError" and caught.value.raised_in_student_process


def test_the_reserved_names_are_every_verdict_of_the_checks():
    checks_module = load_checks_module()
    verdicts = {
        name
        for name, value in vars(checks_module).items()
        if isinstance(value, type) and issubclass(value, checks_module.Diagnosis)
    }
    assert verdicts == crossing.KIT_VERDICT_NAMES


def test_loosely_comparing_results_arrive_as_their_plain_values():
    class Always(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    loop = Loopback({"label": lambda: Always("leaf")})
    label = loop.answer("label")()
    assert type(label) is str and label == "leaf" and label != "no_grad"


def test_a_graph_built_by_the_test_does_not_cross():
    loop = Loopback({"look": lambda t: t})
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(CrossingError, match="in_kernel"):
        loop.answer("look")(w * 2)


def test_a_storage_swapped_through_data_comes_back_as_new_memory():
    def assign_data(params, lr):
        for p in params:
            p.data = p.data - lr * p.grad

    loop = Loopback({"step": assign_data})
    w = torch.ones(3, requires_grad=True)
    w.grad = torch.full((3,), 2.0)
    pointer = w.data_ptr()
    loop.grader.allow_changes([w])
    loop.answer("step")([w], 0.5)
    assert w.tolist() == [0.0, 0.0, 0.0] and w.data_ptr() != pointer and w.is_leaf and w.requires_grad


def test_the_gradient_a_retained_intermediate_kept_comes_back():
    def chain(x):
        y = x * x
        y.retain_grad()
        (y * 3).sum().backward()
        return y

    loop = Loopback({"chain": chain})
    y = loop.answer("chain")(torch.ones(2, requires_grad=True))
    assert not y.is_leaf and y.retains_grad and y.grad.tolist() == [3.0, 3.0]


def test_a_reply_that_claims_a_huge_tensor_is_refused_as_a_broken_channel():
    kernel = Mirror("kernel")
    grader = Mirror("grader")
    tiny = torch.zeros(1)
    reply = kernel.outgoing(lambda encoder: encoder.encode(("returned", tiny.expand(4))))
    tree, storages = Mirror.loads(reply)
    tree["body"][1][1][2]["size"] = [10**12]
    tree["body"][1][1][2]["stride"] = [0]
    with pytest.raises(CrossingError, match="not accepted"):
        grader.incoming(kernel.dumps(tree, storages))


def test_a_malformed_reply_is_a_crossing_error_not_an_error_a_test_could_catch():
    with pytest.raises(CrossingError):
        Mirror("grader").incoming(b"not a message")
    assert not issubclass(CrossingError, Exception)


# ----- the test's own tensors are read-only to the kernel ------------------------------------


def test_a_kernel_that_rewrites_the_tests_input_is_refused_and_set_back():
    """The attack: a wrong gradient, then the test's input scaled so that its own expected value matches."""

    def wrong_grad_then_rewrite(x, start):
        (3 * x * x).sum().backward()
        with torch.no_grad():
            start.mul_(3)
        return x.grad

    seen = []
    loop = Loopback({"attack": wrong_grad_then_rewrite, "look": lambda t: seen.append(t.tolist())})
    start = torch.tensor([1.0, 2.0], dtype=torch.float64)
    x = start.clone().requires_grad_()
    gradient = loop.answer("attack")(x, start)
    assert gradient.tolist() == [6.0, 12.0] and x.grad.tolist() == [6.0, 12.0]  # .grad follows the kernel
    assert start.tolist() == [1.0, 2.0] and start._version == 0  # the test's input does not
    assert loop.grader.refused == ["the values of a tensor the test made"]
    loop.answer("look")(start)
    assert seen == [[1.0, 2.0]]  # the next request set the kernel's copy back


def test_a_view_the_kernel_kept_cannot_write_into_the_tests_tensor():
    loop = Loopback({"view": lambda t: t[1:], "fill": lambda t: t.fill_(7.0)})
    values = torch.arange(4.0)
    tail = loop.answer("view")(values)
    loop.answer("fill")(tail)
    assert values.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert loop.grader.refused == ["the values of a tensor the test made"]


def test_requires_grad_and_layout_of_the_tests_tensor_stay_as_the_test_made_them():
    def rewire(t):
        t.requires_grad_()
        t.data = torch.zeros(5)

    loop = Loopback({"rewire": rewire})
    t = torch.ones(2)
    loop.answer("rewire")(t)
    assert t.tolist() == [1.0, 1.0] and not t.requires_grad
    assert loop.grader.refused == ["the storage, shape or strides and requires_grad of a tensor the test made"]


def test_a_gradient_the_test_set_may_be_cleared_and_refilled_in_place():
    """backward() accumulates into an existing .grad, and zero_grad() zeroes it: honest writes to the test's tensors."""

    def zero_then_backward(w):
        w.grad.zero_()
        (w * w).sum().backward()

    loop = Loopback({"step": zero_then_backward})
    w = torch.ones(2, requires_grad=True)
    w.grad = torch.full((2,), 5.0)
    loop.answer("step")(w)
    assert w.grad.tolist() == [2.0, 2.0] and loop.grader.refused == []


def test_a_tensor_of_the_tests_cannot_be_made_a_gradient_to_become_writable():
    def adopt(w, start):
        w.grad = start

    loop = Loopback({"adopt": adopt})
    w, start = torch.ones(2, requires_grad=True), torch.zeros(2)
    loop.answer("adopt")(w, start)
    assert w.grad is None
    assert loop.grader.refused == ["a tensor the test made into a gradient"]


def test_lists_the_test_made_stay_writable_for_its_own_functions():
    loop = Loopback({"apply": lambda f: f()})
    delivered = []
    loop.answer("apply")(functools.partial(operator.iadd, delivered, [1]))  # run in the kernel, on its copy
    assert delivered == [1] and loop.grader.refused == []


def test_a_kernel_that_names_a_grader_handle_it_never_got_breaks_the_channel():
    kernel, grader = Mirror("kernel"), Mirror("grader")
    reply = kernel.outgoing(lambda encoder: encoder.encode(("returned", [1, 2])))
    tree, storages = Mirror.loads(reply)
    tree["body"][1][1] = ("list", "g7", [("v", 1)])
    with pytest.raises(CrossingError, match="never sent"):
        grader.incoming(kernel.dumps(tree, storages))


# ----- what a message may bring -------------------------------------------------------------


def _rezipped(data, compression):
    """The same archive with every entry written again with `compression`."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as target:
        for entry in source.infolist():
            target.writestr(entry.filename, source.read(entry))
    return out.getvalue()


def test_the_kernel_side_writes_only_stored_entries():
    kernel = Mirror("kernel")
    reply = kernel.outgoing(lambda encoder: encoder.encode(("returned", torch.zeros(1000))))
    kinds = {entry.compress_type for entry in zipfile.ZipFile(io.BytesIO(reply)).infolist()}
    assert kinds == {zipfile.ZIP_STORED}


def test_a_compressed_message_is_refused_before_it_is_inflated():
    kernel = Mirror("kernel")
    reply = kernel.outgoing(lambda encoder: encoder.encode(("returned", torch.zeros(1000))))
    with pytest.raises(CrossingError, match="is compressed; only stored entries are read"):
        Mirror("grader").incoming(_rezipped(reply, zipfile.ZIP_DEFLATED))


def test_a_message_declaring_more_bytes_than_the_cap_is_refused(monkeypatch):
    monkeypatch.setattr(crossing, "MAX_MESSAGE_BYTES", 4000)
    kernel = Mirror("kernel")
    small = kernel.outgoing(lambda encoder: encoder.encode(("returned", torch.zeros(10))))
    Mirror("grader").incoming(small)
    large = kernel.outgoing(lambda encoder: encoder.encode(("returned", torch.zeros(1000))))
    with pytest.raises(CrossingError, match="more than the 4000 allowed"):
        Mirror("grader").incoming(large)


def test_a_message_with_too_many_storages_is_refused(monkeypatch):
    monkeypatch.setattr(crossing, "MAX_MESSAGE_STORAGES", 3)
    reply = Mirror("kernel").outgoing(lambda encoder: encoder.encode(("returned", [torch.zeros(1) for _ in range(4)])))
    with pytest.raises(CrossingError, match="at most 3 storages"):
        Mirror("grader").incoming(reply)


def test_storage_bytes_stretched_by_a_zero_stride_are_refused():
    kernel = Mirror("kernel")
    reply = kernel.outgoing(lambda encoder: encoder.encode(("returned", torch.zeros(1))))
    tree, storages = Mirror.loads(reply)
    tree["body"][1][1][2]["storage"] = (tree["body"][1][1][2]["storage"][0], 0, 2**40)
    stretched = [torch.zeros(1, dtype=torch.uint8).expand(2**40)]
    with pytest.raises(CrossingError, match="do not match its size"):
        Mirror("grader").incoming(kernel.dumps(tree, stretched))


def test_one_message_may_bring_only_so_many_bytes_of_tensors(monkeypatch):
    monkeypatch.setattr(crossing, "MAX_MESSAGE_STORAGE_BYTES", 1000)
    reply = Mirror("kernel").outgoing(lambda encoder: encoder.encode(("returned", [torch.zeros(100)] * 1)))
    Mirror("grader").incoming(reply)  # 400 bytes
    reply = Mirror("kernel").outgoing(
        lambda encoder: encoder.encode(("returned", [torch.zeros(100) for _ in range(3)]))
    )
    with pytest.raises(CrossingError, match="at most 1000 bytes of tensors"):
        Mirror("grader").incoming(reply)


def test_the_bytes_paired_over_a_notebook_are_capped(monkeypatch):
    monkeypatch.setattr(crossing, "MAX_PAIRED_STORAGE_BYTES", 1000)
    loop = Loopback({"make": lambda: torch.zeros(100)})
    kept = [loop.answer("make")(), loop.answer("make")()]  # 800 bytes, paired for the rest of the notebook
    assert loop.grader.paired_bytes == 800
    with pytest.raises(CrossingError, match="passed 1000 bytes"):
        kept.append(loop.answer("make")())


def test_the_wire_grammar_is_declared_once_and_each_side_reads_exactly_its_own_tags():
    tags = {value for name, value in vars(crossing.Node).items() if name.isupper()}
    grader, kernel = set(crossing._READERS["grader"]), set(crossing._READERS["kernel"])
    assert grader | kernel == tags
    assert grader - kernel == {crossing.Node.HANDLE}  # only the kernel sends the student's objects
    assert kernel - grader == {"answer", "module", "global", "method", "getattr", "partial"}
    with pytest.raises(CrossingError, match="the grader does not accept 'module' nodes"):
        crossing._Decoder(Mirror("grader"), []).decode(("module", "os"))
    with pytest.raises(CrossingError, match="unknown node 'handle'"):
        crossing._Decoder(Mirror("kernel"), []).decode(("handle", "h1", "Model"))


def test_only_a_side_that_trusts_its_messages_reads_them_with_pickles_own_reader():
    """The kernel reads the grader's requests with pickle's reader; the grader reads a kernel's with torch's restricted one."""
    buffer = io.BytesIO()
    torch.save({"tree": {"updates": [], "body": fractions.Fraction(1, 3)}, "storages": []}, buffer)
    message = buffer.getvalue()
    assert Mirror.loads(message, trusted=True)[0]["body"] == fractions.Fraction(1, 3)
    with pytest.raises(pickle.UnpicklingError):
        Mirror.loads(message)
    request = Mirror("grader").outgoing(lambda encoder: encoder.encode(("returned", [1.5, "two"])))
    assert Mirror("kernel", trusts_messages=True).incoming(request) == ("returned", [1.5, "two"])
    with pytest.raises(CrossingError, match="could not be read"):
        Mirror("grader").incoming(message)
