"""The check helpers the notebooks' test cells share (source/autograd/autograd_checks.py)."""

import warnings

import pytest
import torch
from conftest import load_checks_module

pytestmark = pytest.mark.unit

checks = load_checks_module()


def test_diagnosis_names_its_misconception_and_hides_the_grader_frames():
    error = checks.Diagnosis("x is not a leaf", "op-after-requires-grad")
    assert str(error) == "[misconception: op-after-requires-grad] x is not a leaf"
    assert isinstance(error, AssertionError)
    assert error._render_traceback_() == ["Diagnosis: [misconception: op-after-requires-grad] x is not a leaf"]


def test_expect_passes_silently_and_fails_with_the_message():
    checks.expect(True, "unused")
    with pytest.raises(checks.Diagnosis, match=r"^\[misconception: a-b-c\] wrong$"):
        checks.expect(False, "wrong", "a-b-c")
    with pytest.raises(checks.Diagnosis, match=r"^plain$"):
        checks.expect(False, "plain")


def test_call_answer_translates_a_known_pytorch_error():
    def no_reduction(x):
        (x * x).backward()

    x = torch.ones(3, requires_grad=True)
    with pytest.raises(checks.Diagnosis) as caught:
        checks.call_answer(no_reduction, x)
    assert caught.value.misconception == "vector-backward-without-cotangent"
    assert "no_reduction raised RuntimeError" in str(caught.value)
    # Only the student's frames are shown, starting inside their function, without torch's own.
    shown = "".join(caught.value.detail)
    assert "in no_reduction" in shown and "scalar outputs" in shown
    assert "call_answer" not in shown and "site-packages" not in shown
    # Nor the kit's own frame that carries the call to where the answer runs.
    assert "run_in_student_process" not in shown and "in call_answer" not in shown


def test_call_answer_reports_unfinished_and_unknown_errors():
    def stub():
        raise NotImplementedError()

    def broken():
        return [][1]

    with pytest.raises(checks.Diagnosis, match="not written yet"):
        checks.call_answer(stub)
    with pytest.raises(checks.Diagnosis, match="broken raised IndexError") as caught:
        checks.call_answer(broken)
    assert caught.value.misconception is None


def test_call_answer_fails_a_function_that_changes_a_tensor_it_was_handed():
    def tracks_the_callers_input(xs):  # a tensor inside a list is handed over too
        xs[0].requires_grad_()
        return xs[0]

    def scales_in_place(xs):
        xs[0].data.mul_(2)  # .data: no version counter moves, so the values are compared
        return xs[0]

    for function, what in ((tracks_the_callers_input, "requires_grad"), (scales_in_place, "values")):
        with pytest.raises(checks.Diagnosis, match=f"changed the {what} of a tensor it was handed") as caught:
            checks.call_answer(function, [torch.ones(3)])
        assert caught.value.misconception == "changes-a-handed-input"


def test_a_large_input_is_watched_by_its_version_counter_and_a_declared_one_may_change():
    def zeroes_it(x):
        x.zero_()

    large = torch.ones(checks._COPIED_ELEMENTS + 1)
    with pytest.raises(checks.Diagnosis, match="changed the values"):
        checks.call_answer(zeroes_it, large)
    declared = torch.ones(3)
    checks.may_change_in_place(declared)
    checks.call_answer(zeroes_it, declared)
    assert declared.sum() == 0
    checks.call_answer(lambda x: x.sum(), torch.ones(3))  # reading an input changes nothing


def test_call_answer_keeps_warnings_off_stderr(recwarn):
    def noisy():
        warnings.warn("a non-leaf .grad was read", UserWarning)
        return 7

    assert checks.call_answer(noisy) == 7
    assert len(recwarn) == 0


def test_expect_close_compares_in_float64_with_tolerances():
    checks.expect_close(torch.tensor([1.0, 2.0], dtype=torch.float64), [1.0, 2.0 + 1e-12], "close")
    with pytest.raises(checks.Diagnosis, match=r"largest difference 0.001"):
        checks.expect_close(torch.tensor([1.0, 2.001], dtype=torch.float64), [1.0, 2.0], "far", "a-b-c")
    with pytest.raises(checks.Diagnosis, match="shape"):
        checks.expect_close(torch.zeros(2), torch.zeros(3), "shapes")
    with pytest.raises(checks.Diagnosis, match="torch.Tensor"):
        checks.expect_close([1.0], [1.0], "not a tensor")


def test_expect_tensor_checks_type_and_shape():
    checks.expect_tensor(torch.zeros(2, 3), "t", shape=(2, 3))
    with pytest.raises(checks.Diagnosis, match=r"shape \(2, 3\), got \(3, 2\)"):
        checks.expect_tensor(torch.zeros(3, 2), "t", shape=(2, 3))


def test_expect_tensor_refuses_subclasses_that_redefine_comparison():
    class Agreeable(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return (
                True
                if getattr(func, "__name__", "") == "equal"
                else super().__torch_function__(func, types, args, kwargs)
            )

    forged = torch.zeros(()).as_subclass(Agreeable)
    with pytest.raises(checks.Diagnosis, match="plain torch.Tensor, not the subclass Agreeable"):
        checks.expect_tensor(forged, "the gradient")
    checks.expect_tensor(torch.nn.Parameter(torch.zeros(2)), "a parameter", shape=(2,))


def test_central_difference_matches_closed_forms():
    point = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64)
    gradient = checks.central_difference(lambda t: (t.sin() * t).sum(), point)
    torch.testing.assert_close(gradient, point.cos() * point + point.sin(), rtol=1e-7, atol=1e-9)


def test_seeded_generators_repeat():
    first = torch.randn(4, generator=checks.seeded(3))
    assert torch.equal(first, torch.randn(4, generator=checks.seeded(3)))


def test_in_kernel_and_beside_student_run_here_when_grading_is_not_sealed():
    assert checks.in_kernel(lambda a, b: a + b, 2, b=3) == 5
    with checks.counting_saved_tensors() as saved:
        (torch.ones(2, requires_grad=True) * torch.ones(2)).sum()
    assert saved[0] > 0
    entered = []

    class Recording:
        def __enter__(self):
            entered.append("in")
            return "value"

        def __exit__(self, *error):
            entered.append("out")

    with checks.beside_student(Recording) as value:
        assert value == "value"
    assert entered == ["in", "out"]


STUDENT_CELLS = """
import functools
import torch

def real_forward(x):
    raise ValueError("the student's own helper ran")

def logged(function):  # a decorator of the student's, one more link in the __wrapped__ chain
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper

@torch.no_grad()
@logged
def scored(x):
    return real_forward(x).sum()
"""


def test_standing_in_follows_decorators_to_the_function_that_looks_its_helpers_up():
    namespace = {"__name__": "__notebook__"}
    exec(STUDENT_CELLS, namespace)
    scored, real_forward = namespace["scored"], namespace["real_forward"]
    torch_wrapper_globals = scored.__globals__  # torch's own module: the outer no_grad wrapper lives there
    assert torch_wrapper_globals is not namespace and "real_forward" not in torch_wrapper_globals
    x = torch.ones(3, requires_grad=True)
    with checks.standing_in(scored, real_forward=checks.doubled):
        result = scored(x)
    assert result.item() == 6.0 and not result.requires_grad  # the stand-in ran, under the decorator's no_grad
    assert namespace["real_forward"] is real_forward  # put back
    assert "real_forward" not in torch_wrapper_globals  # and taken out again where it was missing
    with pytest.raises(ValueError, match="own helper ran"):
        scored(x)


def test_standing_in_restores_every_namespace_when_the_block_fails():
    namespace = {"__name__": "__notebook__"}
    exec(STUDENT_CELLS, namespace)
    real_forward = namespace["real_forward"]
    with pytest.raises(KeyError), checks.standing_in(namespace["scored"], real_forward=checks.doubled):
        raise KeyError("the check around the block failed")
    assert namespace["real_forward"] is real_forward
    assert "real_forward" not in namespace["scored"].__globals__


def test_an_error_rebuilt_from_the_students_kernel_shows_its_type_and_message_only():
    error = RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation"
    )
    error.raised_in_student_process = True

    def raises():
        raise error

    with pytest.raises(checks.Diagnosis) as caught:
        checks.call_answer(raises)
    assert caught.value.detail == ("RuntimeError: " + str(error) + "\n",)


def test_a_leaf_notes_gradients_a_backward_pass_delivers():
    deliveries = []
    x = checks.leaf_noting_deliveries([1.0, 2.0], deliveries)
    assert x.is_leaf and x.requires_grad and x.dtype == torch.float64
    (x * x).sum().backward()
    delivered = checks.gradients_from_backward(deliveries, "square_sum_grad(x)")
    assert len(delivered) == 1 and delivered[0].tolist() == [2.0, 4.0]


def test_a_hook_called_by_hand_is_a_forgery():
    deliveries = []
    x = checks.leaf_noting_deliveries([1.0, 2.0], deliveries)
    for hook in x._backward_hooks.values():
        hook(2 * x.detach())
    with pytest.raises(checks.Forgery, match="outside any backward pass") as caught:
        checks.gradients_from_backward(deliveries, "square_sum_grad(x)")
    assert isinstance(caught.value, checks.Diagnosis) and caught.value.forged is True


def test_a_delivery_record_written_over_is_a_forgery():
    forged = [(checks.BACKWARD, torch.ones(2)), "a gradient, honestly"]
    with pytest.raises(checks.Forgery, match="written over"):
        checks.gradients_from_backward(forged, "chain_gradients(x)")


def test_noting_retain_grad_records_and_restores():
    before = torch.Tensor.__dict__.get("retain_grad")
    with checks.noting_retain_grad([]) as retained:
        y = torch.ones(2, requires_grad=True) * 3
        y.retain_grad()
    assert retained == [y] and y.retains_grad
    assert torch.Tensor.__dict__.get("retain_grad") is before
    assert checks.stored_gradients([y]) == [None]


def test_noting_backward_passes_sees_a_pass_that_misses_the_input():
    x = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    with checks.noting_backward_passes([]) as passes:
        y = (x**2).detach().requires_grad_()  # a leaf of its own: the pass stops there
        (torch.sin(y) + 5).backward()
    assert len(passes) == 1 and x.grad is None and y.grad is not None


def test_noting_backward_passes_notes_nothing_without_backward():
    x = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    with checks.noting_backward_passes([]) as passes:
        2 * x * torch.cos(x**2)  # a derivative written out runs forward operations only
    assert passes == []


def _vjp_by_backward(f, x, v):
    x = x.clone().requires_grad_()
    f(x).backward(v)
    return x.grad


def _vjp_by_dense_jacobian(f, x, v):
    return v @ torch.autograd.functional.jacobian(f, x)


def _vjp_with_the_watch_popped(f, x, v):
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        return _vjp_by_dense_jacobian(f, x, v)


def test_the_watch_counts_products_and_passes_a_vjp_within_the_limit():
    x, v = torch.ones(50, dtype=torch.float64), torch.ones(50, dtype=torch.float64)
    result, watched = checks.call_watched(_vjp_by_backward, checks.sine_times_running_sum, x, v, limit=400)
    assert watched == {"over": None, "products": 0, "popped": False}
    checks.expect_within(watched, "unused")
    assert result.shape == (50,)
    _, watched = checks.call_watched(torch.mm, torch.ones(2, 3), torch.ones(3, 2))
    assert watched["products"] == 1
    assert torch._C._len_torch_dispatch_stack() == 0


def test_the_watch_stops_a_dense_jacobian():
    x, v = torch.ones(50, dtype=torch.float64), torch.ones(50, dtype=torch.float64)
    result, watched = checks.call_watched(_vjp_by_dense_jacobian, checks.sine_times_running_sum, x, v, limit=400)
    assert result is None and "made a tensor of shape (50, 50)" in watched["over"] and not watched["popped"]
    with pytest.raises(checks.Diagnosis, match=r"^\[misconception: a-b-c\] too big \(") as caught:
        checks.expect_within(watched, "too big", "a-b-c")
    assert not isinstance(caught.value, checks.Forgery)
    assert torch._C._len_torch_dispatch_stack() == 0


def test_popping_the_watch_is_a_forgery():
    x, v = torch.ones(50, dtype=torch.float64), torch.ones(50, dtype=torch.float64)
    result, watched = checks.call_watched(_vjp_with_the_watch_popped, checks.sine_times_running_sum, x, v, limit=400)
    assert result.shape == (50,) and watched["over"] is None and watched["popped"]
    with pytest.raises(checks.Forgery, match="took the grader's watch off"):
        checks.expect_within(watched, "too big")
    assert torch._C._len_torch_dispatch_stack() == 0


def test_a_watch_left_off_the_stack_is_a_forgery_too():
    raw_pop = torch._C._pop_torch_dispatch_stack  # taken before the call: the noting wrapper never sees it

    _, watched = checks.call_watched(lambda: raw_pop(None))
    assert watched["popped"] and torch._C._len_torch_dispatch_stack() == 0


def test_the_stand_ins_compute_what_their_names_say():
    t = torch.tensor([0.5, 2.0, -1.0], dtype=torch.float64)
    assert checks.sum_of_squares(t).item() == 5.25
    assert checks.halved_sum(t).item() == 0.75
    assert checks.squared(t).tolist() == [0.25, 4.0, 1.0]
    assert checks.gram(t.view(1, 3)).item() == 5.25
    assert checks.matrix_times(torch.eye(3, dtype=torch.float64), t).tolist() == t.tolist()
    assert checks.euclidean_norm(torch.tensor([3.0, 4.0])).item() == 5.0
    calls = []
    assert checks.noting_calls(checks.sum_of_squares, calls, t.requires_grad_()).item() == 5.25
    assert calls == [True]
    keys = [situation[0] for situation in checks.grad_none_situations()]
    assert len(keys) == len(set(keys)) == 13


def test_noting_the_grad_mode_tells_no_grad_from_an_untracked_input():
    calls, grad_modes = [], []
    t = torch.tensor([1.0, 2.0], dtype=torch.float64)
    checks.noting_calls_and_grad_mode(checks.sum_of_squares, calls, grad_modes, t)
    with torch.no_grad():
        checks.noting_calls_and_grad_mode(checks.sum_of_squares, calls, grad_modes, t.requires_grad_())
    assert calls == [False, False]
    assert grad_modes == [True, False]


def test_apart_shows_just_enough_digits_to_tell_two_numbers_apart():
    rounded = float(torch.tensor(0.1849, dtype=torch.float32))
    assert checks.apart(rounded, 0.1849) == ("0.184900001", "0.1849")
    assert checks.apart(8.0, 4.0) == ("8", "4")
    assert checks.apart(1.5, 1.5) == ("1.5", "1.5")


def test_a_returned_truth_value_of_another_type_is_named_exactly():
    numpy = pytest.importorskip("numpy")
    checks.expect_python_bool(True, "answer()")
    with pytest.raises(checks.Diagnosis) as failure:
        checks.expect_python_bool(numpy.True_, "answer()")
    named = f"{type(numpy.True_).__module__}.{type(numpy.True_).__qualname__}"
    assert f"got {named}: return True or False" in str(failure.value) and "Python bool" in str(failure.value)
    assert "bool(...)" in str(failure.value)
    with pytest.raises(checks.Diagnosis, match="got int: return True or False$"):
        checks.expect_python_bool(1, "answer()")


def test_a_tensor_rebuilt_around_the_same_memory_is_told_from_data_and_detach():
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    through_numpy = torch.from_numpy(x.detach().numpy())
    assert through_numpy.data_ptr() == x.data_ptr()
    assert checks.rewrapped_memory(through_numpy, x)
    assert checks.rewrapped_memory(torch.as_tensor(x.detach().numpy()), x)
    assert not checks.rewrapped_memory(x.data, x)
    assert not checks.rewrapped_memory(x.detach()[1:], x)


def test_noting_mode_switches_records_eval_and_train_as_asked():
    model, _ = checks.dropout_model()
    switches = []
    checks.noting_mode_switches(model, switches)
    model.eval()
    assert not model.training and not model[1].training
    model.train()
    model.train(False)
    assert switches == [False, True, False]
