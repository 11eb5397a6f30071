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
