"""Mistakes students made whose diagnosis misled them: each check now names the misconception and says the fix.

Every answer below is the reference notebook with one function rewritten the way
a student wrote it; the checks run in process, as `python -m gradekit check` runs them.
"""

import pytest

from gradekit.authoring.checks_in_process import load_support_modules, run_checks
from gradekit.authoring.solutions import NegativeControl
from gradekit.core.manifest import SCRIPTS_DIR
from gradekit.core.notebook_script import read_script
from gradekit.proof.subjects import mixed_answer_sources
from gradekit.proof.visible import visible_script

pytestmark = pytest.mark.notebook

BACKWARD_WITHOUT_V = """def vjp(f, x, v):
    x = x.clone().requires_grad_()
    y = f(x)
    y.backward()
    return x.grad
"""
NEVER_CLEARED_NOR_WEIGHTED = """def accumulate_grads(params, loss_fn, batches):
    for X, y in batches:
        loss_fn(X, y).backward()
"""
DOUBLE_AFTER_REQUIRES_GRAD = """def float64_leaf(values):
    return torch.tensor(values, requires_grad=True).double()
"""
FORMULA_INSTEAD_OF_AUTOGRAD = """def gradient_at(function, values):
    return torch.tensor([2 * value for value in values], dtype=torch.float64)
"""
JACOBIAN_TIMES_V = """def vjp(f, x, v):
    J = torch.autograd.functional.jacobian(f, x)
    return v @ J
"""

SNAPSHOT_THROUGH_NUMPY = """def tensor_snapshot(tensor):
    return torch.from_numpy(tensor.detach().numpy())
"""
EVALUATED_THEN_BACK_TO_TRAINING = """def evaluate_without_graph(model, inputs):
    model.eval()
    with torch.no_grad():
        outputs = model(inputs)
    model.train()
    return outputs
"""
BACK_TO_TRAINING_BEFORE_COMPUTING = """def evaluate_without_graph(model, inputs):
    model.eval()
    model.train()
    with torch.no_grad():
        return model(inputs)
"""


@pytest.fixture(scope="module", autouse=True)
def support_modules(course):
    load_support_modules(course.source_dir)


def failure(manifest, notebook: str, function: str, source: str, cell: str, hidden: bool = False) -> str:
    """What the test cell says to the answer (its visible part, unless `hidden`); it must fail."""
    script = read_script(SCRIPTS_DIR / f"{notebook}.py")
    script = script if hidden else visible_script(script)
    answer = NegativeControl("as-written", notebook, function, "", (), source)
    (outcome,) = [o for o in run_checks(script, mixed_answer_sources(manifest, notebook, (answer,))) if o.cell == cell]
    assert not outcome.passed, f"{cell} passed {function} as the student wrote it"
    return " ".join(outcome.failure.split())


def test_a_bare_backward_in_vjp_is_told_to_pass_v_not_to_reduce(manifest):
    said = failure(manifest, "021_cotangents", "vjp", BACKWARD_WITHOUT_V, "test_vjp")
    assert "[misconception: vector-backward-without-cotangent]" in said, said
    assert "y.backward(v)" in said, said
    assert ".sum()" not in said and "reduce the output" not in said, said


def test_accumulating_without_clearing_or_weighting_is_told_to_clear_first(manifest):
    said = failure(
        manifest, "050_safe_updates", "accumulate_grads", NEVER_CLEARED_NOR_WEIGHTED, "test_accumulate_grads"
    )
    assert "[misconception: stale-grad-after-update]" in said, said
    assert "clear .grad before accumulating" in said, said
    assert "largest difference" not in said, said


def test_double_after_requires_grad_is_told_to_build_in_float64_first(manifest):
    said = failure(manifest, "010_history", "float64_leaf", DOUBLE_AFTER_REQUIRES_GRAD, "test_float64_leaf")
    assert "[misconception: op-after-requires-grad]" in said, said
    assert ".double()" in said and "build the tensor as float64 first, then set requires_grad" in said, said


def test_a_gradient_by_formula_is_named_and_told_to_ask_autograd(manifest):
    said = failure(manifest, "010_history", "gradient_at", FORMULA_INSTEAD_OF_AUTOGRAD, "test_gradient_at")
    assert "[misconception: grad-by-formula]" in said, said
    assert "call backward() on its result and return the leaf's .grad" in said, said


def test_a_jacobian_shaped_vjp_is_named_by_the_grader(manifest):
    said = failure(manifest, "021_cotangents", "vjp", JACOBIAN_TIMES_V, "test_vjp", hidden=True)
    assert "[misconception: dense-jacobian-for-vjp]" in said, said
    assert "the shape of a Jacobian" in said and "pass v to backward(v)" in said, said


@pytest.mark.parametrize("hidden", [False, True])
def test_a_snapshot_through_numpy_is_named_as_the_conversion_not_as_data(manifest, hidden):
    said = failure(
        manifest, "070_snapshots", "tensor_snapshot", SNAPSHOT_THROUGH_NUMPY, "test_tensor_snapshot", hidden=hidden
    )
    assert "[misconception: numpy-conversion-copies-data]" in said, said
    assert "torch.from_numpy()" in said and "use x.detach().clone() instead" in said, said
    assert ".data" not in said, said


@pytest.mark.parametrize("hidden", [False, True])
def test_a_model_switched_back_after_evaluating_is_told_to_stay_in_eval_without_a_wrong_name(manifest, hidden):
    said = failure(
        manifest,
        "090_decisions",
        "evaluate_without_graph",
        EVALUATED_THEN_BACK_TO_TRAINING,
        "test_evaluate_without_graph",
        hidden=hidden,
    )
    assert "misconception:" not in said, said
    assert "leave the model in evaluation mode when you return" in said, said


def test_a_model_switched_back_before_computing_is_told_the_order_without_a_wrong_name(manifest):
    said = failure(
        manifest,
        "090_decisions",
        "evaluate_without_graph",
        BACK_TO_TRAINING_BEFORE_COMPUTING,
        "test_evaluate_without_graph",
    )
    assert "misconception:" not in said, said
    assert "call model.eval(), compute the outputs, and return with the model still in evaluation mode" in said, said
