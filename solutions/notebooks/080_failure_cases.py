# %% [markdown] fc_intro
# # 8 · Failure cases you can run
#
# Most autograd bugs are not crashes in your own code: they are a gradient that is silently
# doubled, a graph that is gone when you come back to it, or a value that changed after
# PyTorch had put it aside for later. This notebook turns two such failures into small
# experiments that you can run and report on. In each one we know in advance what PyTorch
# must do, so a result that surprises you shows where your picture of autograd is off.
#
# 1. Walking the same graph twice: what `backward()` frees, and how `.grad` adds up.
# 2. Changing an input in place after the forward pass: when autograd notices, and when it
#    cannot.
#
# **How to work.** Run the setup cell first. Replace the `NotImplementedError` lines of each
# answer cell with your code, run it, then run the check cell under it. The visible check tests
# what the exercise states on the page's own example; the grader runs further tests on other
# functions and points, and names the misconception it recognises when a test fails.

# %% fc_setup
import functools
import math

import torch

import autograd_checks as checks
from autograd_checks import COMMON_ERRORS, call_answer, central_difference, expect, expect_close, expect_tensor, raised_by, seeded

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# PyTorch errors that this notebook's mistakes raise, with the misconception each one reveals.
FAILURE_ERRORS = COMMON_ERRORS + (
    (
        "a second time",
        "graph-survives-backward",
        "backward() went through a graph whose saved tensors an earlier backward() had already freed; "
        "keep them with backward(retain_graph=True), or catch the error when you expect it",
    ),
    (
        "leaf Variable that requires grad",
        "inplace-leaf-in-grad-mode",
        "x was changed in place while grad mode was on, and PyTorch refuses to change a leaf that requires grad; "
        "make the change inside torch.no_grad()",
    ),
)

# %% [markdown] md_repeated_backward_report
# ## Walking a graph twice
#
# During the forward pass some operations keep tensors they will need later: `x ** 3` keeps
# `x`, because its local derivative $3x^2$ depends on it; `exp` keeps its own output. These
# are the *saved tensors* of the graph. A plain `backward()` uses them and then lets them go,
# so that memory is returned as soon as possible. What survives is the leaf's `.grad`.
#
# Three facts follow, all visible with $y = x^3$ at $x = 2$:
#
# * The first `y.backward()` leaves `x.grad` equal to $3 \cdot 2^2 = 12$.
# * Calling `y.backward()` again on the same `y` raises a `RuntimeError` (its message says the
#   graph is being walked "a second time"): the saved `x` is gone. Resetting `x.grad` would not
#   help; the graph, not the gradient, is what was consumed.
# * If the first call is `y.backward(retain_graph=True)`, the saved tensors are kept and a
#   second call works. Both calls **add** into `x.grad`: starting from `x.grad = None`, two
#   calls leave $12 + 12 = 24$. Keeping a graph never resets a gradient.
#
# A graph whose steps save nothing (for instance `x - 2`, whose local derivative is the
# constant 1) can sometimes be walked again without `retain_graph`. So a second backward that
# raises is typical, not guaranteed: the only way to know is to run it.
#
# ### Exercise 1 (3 points)
#
# Write `repeated_backward_report(function, value)`. Starting from a float64 leaf at `value`,
# return a tuple `(first_grad, second_raises, accumulated_grad)`:
#
# * `first_grad`: `x.grad` after one `backward()` on `function(x)`;
# * `second_raises`: `True` if a second plain `backward()` on that same output raises, else
#   `False` (catch the `RuntimeError`; do not let it escape);
# * `accumulated_grad`: `x.grad` after `backward(retain_graph=True)` followed by `backward()`
#   on a freshly computed output, starting from `x.grad = None`.
#
# Careful: a later `backward()` may add into the very tensor you are about to return as
# `first_grad`, so keep a copy. The grader uses other functions and points and compares with
# finite differences.

# %% answer answer_repeated_backward_report
from solutions.reference.failure_cases import repeated_backward_report

# %% test test_repeated_backward_report points=3 targets=backward-overwrites-grad,graph-survives-backward,second-backward-always-raises,grad-attribute-is-snapshot,cast-restores-precision
def expect_float64_digits(gradient, exact, what):
    """A gradient that agrees with the float64 closed form only to float32's digits was computed in float32."""
    found = gradient.detach().double().item()
    if math.isclose(found, exact, rel_tol=1e-12, abs_tol=0.0):
        return
    expect(
        not math.isclose(found, exact, rel_tol=1e-5, abs_tol=0.0),
        f"{what} is {found!r}, but the derivative in float64 is {exact!r}: they agree only to float32's digits, "
        "so it was computed in float32 somewhere; a float64 result needs a float64 leaf and float64 steps "
        "(a cast at the end does not bring the digits back)"
        "; build x with dtype=torch.float64 and keep every step in float64",
        "cast-restores-precision",
    )
    expect(
        False,
        f"{what} is {found!r}, but the derivative in float64 is {exact!r}"
        ": build x as a float64 leaf at the given value and call backward() on function(x) itself",
    )


def check_repeated_backward(shown, function, value, raises, exact_slope):
    """One function at one point: the first gradient (a copy), whether a second walk raises, two calls' sum."""
    call = f"repeated_backward_report({shown}, {value})"
    seen = []  # every tensor the function was evaluated on: the exercise starts from a float64 leaf
    recording = functools.partial(checks.noting_inputs, seen, function)
    report = call_answer(repeated_backward_report, recording, value, known_errors=FAILURE_ERRORS)
    expect(
        isinstance(report, tuple) and len(report) == 3,
        f"{call} should return a tuple (first_grad, second_raises, accumulated_grad)"
        ": return a tuple of the three, in that order",
    )
    first_grad, second_raises, accumulated_grad = report
    slope = central_difference(function, value)
    expect_tensor(first_grad, f"first_grad of {call}", shape=())
    expect(
        first_grad.dtype == torch.float64,
        f"first_grad of {call} has dtype {first_grad.dtype}: make the leaf with dtype=torch.float64",
        "numpy-default-dtype",
    )
    built_in = sorted({str(t.dtype) for t in seen if isinstance(t, torch.Tensor) and t.dtype != torch.float64})
    expect(
        not built_in,
        f"{call} evaluated {shown} on a {' and '.join(built_in)} tensor, though first_grad comes back as float64: "
        "a gradient computed from a float32 leaf keeps float32's digits after a cast; make the leaf float64",
        "cast-restores-precision",
    )
    doubled = torch.allclose(first_grad.detach(), 2 * slope, rtol=1e-6, atol=1e-8)
    expect(
        not (doubled and not torch.allclose(first_grad.detach(), slope, rtol=1e-6, atol=1e-8)),
        f"first_grad of {call} holds twice the derivative: it is x.grad itself, not a copy, and the second "
        "backward() (which runs for this function) added into that very tensor after you took it. Return "
        "x.grad.clone()",
        "grad-attribute-is-snapshot",
    )
    expect_close(
        first_grad,
        slope,
        f"first_grad of {call} is not the derivative at {value}"
        ": return a copy of x.grad after one backward() on a fresh graph",
        rtol=1e-6,
        atol=1e-8,
    )
    expect_float64_digits(first_grad, exact_slope, f"first_grad of {call}")
    if raises:
        expect(
            second_raises is True,
            f"{call}: the first backward() freed the tensors that {shown} saved, so a second plain backward() "
            "raises; second_raises should be True; try the second backward() and record whether it raises",
            "graph-survives-backward",
        )
    else:
        expect(
            second_raises is False,
            f"{call}: {shown} saves no tensors for backward, so a second plain backward() runs; "
            "second_raises must come from actually trying it; try the second backward() and record whether it raises",
            "second-backward-always-raises",
        )
    expect_tensor(accumulated_grad, f"accumulated_grad of {call}", shape=())
    same_as_one_call = torch.allclose(accumulated_grad.detach().double(), slope, rtol=1e-6, atol=1e-8)
    expect(
        not same_as_one_call,
        f"{call}: accumulated_grad equals the gradient of a single call; backward() adds into .grad, "
        "so two calls on a retained graph give twice the derivative"
        "; call backward(retain_graph=True) and then backward() on a new output, starting from x.grad = None",
        "backward-overwrites-grad",
    )
    # Three or four times: the earlier parts' gradients were still in x.grad when the two calls added theirs.
    stale = any(
        torch.allclose(accumulated_grad.detach().double(), times * slope, rtol=1e-6, atol=1e-8) for times in (3, 4)
    )
    expect(
        not stale or torch.allclose(slope, torch.zeros_like(slope)),
        f"accumulated_grad of {call} holds more than two calls' gradients: x.grad still held the gradients of "
        "the earlier backward() calls, and backward() adds into .grad"
        "; set x.grad = None (or start from a fresh leaf) before the two calls",
        "backward-overwrites-grad",
    )
    expect_close(
        accumulated_grad,
        2 * slope,
        f"accumulated_grad of {call} should be twice the derivative (two calls, starting from x.grad = None)"
        ": start from x.grad = None, call backward(retain_graph=True) once and backward() on a new output once",
        rtol=1e-6,
        atol=1e-8,
    )
    expect_float64_digits(accumulated_grad, 2 * exact_slope, f"accumulated_grad of {call}")


# The page's y = x**3 at x = 2 (12, raises, 24) and x - 2, whose graph saves nothing.
check_repeated_backward("x ** 3", checks.cubed, 2.0, True, 12.0)
check_repeated_backward("x - 2", checks.minus_two, 2.0, False, 1.0)
print(
    "Checked the page's x ** 3 at x = 2 (first_grad 12, the second walk raises, 24 after two calls) and x - 2, "
    "which can be walked again, each evaluated on a float64 leaf. The grader also tests other functions and points, "
    "and float64 digits."
)

### BEGIN HIDDEN TESTS
# (shown, function, point, does a second plain backward raise?, the derivative in float64 from its closed form)
# float32 holds neither 1 + 2**-30 (it rounds to 1) nor 0.8 nor 0.3, so a float32 detour shows in the digits.
cases = [
    ("x ** 3", checks.cubed, -1.5, True, 3 * 1.5**2),  # pow saves x
    ("x ** 3", checks.cubed, 1 + 2**-30, True, 3 * (1 + 2**-30) ** 2),
    ("sin(x) * x", checks.sine_times_self, 0.8, True, math.cos(0.8) * 0.8 + math.sin(0.8)),  # both save inputs
    ("exp(x)", torch.exp, 0.3, True, math.exp(0.3)),  # exp saves its output
    ("exp(x)", torch.exp, 5 + 2**-30, True, math.exp(5 + 2**-30)),
    ("x - 2", checks.minus_two, 1.25, False, 1.0),  # the local derivative is 1: nothing is saved
]
for case in cases:
    check_repeated_backward(*case)
### END HIDDEN TESTS

# %% [markdown] md_mutation_detected
# ## Changing a saved value in place
#
# Start from the leaves $x = 2$ and $w = 3$ and form $z = x \cdot w$. Differentiating $z$ with
# respect to $w$ gives $x$, so the multiplication stores `x` for the backward pass. Now increase
# `x` by 1 in place, inside `torch.no_grad()` so that the change itself is not recorded, and only
# afterwards call `z.backward()`. The stored `x` now holds 3, not the 2 the product was computed
# with, and PyTorch will not use it: backward stops with a `RuntimeError` reporting that a
# variable it needs was *modified by an inplace operation*.
#
# The bookkeeping behind this is a per-tensor **version counter** (`t._version`), raised by one at
# every in-place change. When a tensor is stored for backward, its current version is noted with
# it; when backward takes the tensor out again, the two numbers are compared. It is a cheap
# design rather than the only possible one, and it can only fire for a tensor that backward
# actually takes out.
#
# The same experiment with $z = x + w$ ends differently. The local derivatives of a sum are the
# constant 1, so nothing is stored; backward runs quietly and sets both `x.grad` and `w.grad` to 1.
# No check happens because the result does not depend on what `x` holds.
#
# Keep two separate rules apart:
#
# * Recording is not the issue. `torch.no_grad()` keeps the update out of the graph, but a value
#   that a graph still needs is overwritten all the same. Running backward again through a
#   retained graph after an optimizer step has changed the parameters is this very hazard.
# * In grad mode, PyTorch refuses an in-place change to a leaf that requires grad straight away,
#   with no backward involved. That rule concerns the leaf, not stored values.
#
# ### Exercise 2 (3 points)
#
# Write `mutation_detected(operation)`. `operation` is a function of two tensors `x` and `w`
# (for example `lambda x, w: x * w`). Make float64 leaves `x = 2.0` and `w = 3.0` that require
# grad, compute `z = operation(x, w)`, add 1 to `x` in place inside `torch.no_grad()`, then
# call `z.backward()`. Return `True` if backward raises because of the in-place change,
# `False` if it runs. If backward fails for some other reason, that is not an answer to the
# question: let the error reach the caller unchanged. For example, `lambda x, w: (x * w).repeat(2)`
# makes `z` a vector of two entries, and `z.backward()` then fails because no cotangent was given
# for it, whether or not `x` was changed.
#
# Find the answer by running the experiment. The grader also passes operations that this page
# does not show, and for some of them the answer is not what the kind of operation suggests.

# %% answer answer_mutation_detected
from solutions.reference.failure_cases import mutation_detected

# %% test test_mutation_detected points=3 targets=mutation-lookup-by-op,inplace-leaf-in-grad-mode,rebinding-is-in-place,data-attribute-is-safe,any-backward-error-is-mutation
def check_mutation(shown, operation, truth, reason):
    """The experiment run with `operation`: its answer, how x was changed, and the stated leaves."""
    seen = []
    recorded = functools.partial(checks.noting_operands, seen, operation)
    detected = call_answer(mutation_detected, recorded, known_errors=FAILURE_ERRORS)
    call = f"mutation_detected({shown})"
    expect(
        bool(seen),
        f"{call} never ran the operation: build x and w, run it, change x, then call backward()",
        "mutation-lookup-by-op",
    )
    expect(
        all(x.requires_grad and x.is_leaf and w.requires_grad and w.is_leaf for x, w in seen),
        f"{call} passed tensors that are not leaves requiring grad, so backward() has nothing to check"
        ": build x and w with requires_grad=True",
    )
    expect(
        torch.is_grad_enabled(),
        f"grad mode is still off after {call}: use the block form `with torch.no_grad():` so it is switched back on",
    )
    expect(
        isinstance(detected, bool),
        f"{call} should return True or False, got {type(detected).__name__}"
        ": return the bool your experiment decided",
    )
    x, w = seen[0]
    if detected is not truth and w.grad is not None:  # backward ran, yet did not see the change
        expect(
            x.detach().item() != 2.0,
            f"{call} returned {detected}, but x was never changed in place: it still holds 2. Inside torch.no_grad(), "
            "`x = x + 1` builds a new tensor and rebinds the name, so the tensor the graph saved is untouched. "
            "Change the tensor itself: x.add_(1) or x += 1",
            "rebinding-is-in-place",
        )
        expect(
            x._version > 0,
            f"{call} returned {detected}: x now holds {x.detach().item()}, but its version counter never moved. "
            "Writing through x.data changes the values behind autograd's back, so backward cannot notice; "
            "change x itself with x.add_(1) inside torch.no_grad()",
            "data-attribute-is-safe",
        )
    outcome = "raises" if truth else "runs"
    expect(
        detected is truth,
        f"{call} returned {detected}, but backward() {outcome} after x changes: {reason}. Whether the change "
        "is caught depends on which tensors were saved, not on the kind of operation; run backward() to find out",
        "mutation-lookup-by-op",
    )
    return call, x, w


def check_stated_leaves(call, x, w):
    """The stated experiment: float64 leaves x = 2.0 and w = 3.0, and x raised by exactly 1."""
    expect(
        x.dtype == torch.float64 and w.dtype == torch.float64,
        f"{call} built x and w with dtypes {x.dtype} and {w.dtype}; the exercise asks for float64 leaves"
        ": build both with dtype=torch.float64",
    )
    expect(
        x.detach().reshape(-1).tolist() == [3.0] and w.detach().reshape(-1).tolist() == [3.0],
        f"{call} should start from x = 2.0 and w = 3.0 and add 1 to x; afterwards x holds "
        f"{x.detach().reshape(-1).tolist()} and w {w.detach().reshape(-1).tolist()}",
    )


# The page's two experiments: the product saves x, the sum saves nothing.
page_runs = [
    check_mutation("x * w", checks.product, True, "the product saves x to form the gradient of w"),
    check_mutation("x + w", checks.total, False, "the sum saves nothing: both local derivatives are 1"),
]
# The page's (x * w).repeat(2): backward fails for want of a cotangent, which is no answer to the question.
repeated = "for the page's (x * w).repeat(2), whose backward() fails because z is a vector with no cotangent,"
if raised_by(mutation_detected, checks.product_repeated) is None:
    seen = []
    answer = call_answer(
        mutation_detected, functools.partial(checks.noting_operands, seen, checks.product_repeated), known_errors=FAILURE_ERRORS
    )
    expect(
        answer is not True,
        f"{repeated} mutation_detected returned True instead of letting that error through: only an error about "
        "an inplace operation means the change was caught"
        "; catch only the RuntimeError about an inplace operation and re-raise every other error",
        "any-backward-error-is-mutation",
    )
    expect(
        not seen or seen[0][0]._version > 0,
        f"{repeated} mutation_detected returned {answer!r} without changing x in place: the answer must come from "
        "running the experiment, not from the kind of operation; change x in place and run z.backward() to find out",
        "mutation-lookup-by-op",
    )
    expect(
        False,
        f"{repeated} mutation_detected returned {answer!r} instead of letting that error through"
        "; re-raise every error that is not about an inplace operation",
    )
print(
    "Checked the page's experiments: x * w is caught (True), x + w runs (False), and the error of (x * w).repeat(2) "
    "reaches the caller. The grader also checks the float64 leaves x = 2 and w = 3 and the in-place change, "
    "operations this page does not show, and another unrelated error."
)

### BEGIN HIDDEN TESTS
# (shown, operation, is the change to x detected?, which tensors backward reads)
cases = [
    ("x / w", checks.quotient, True, "the division saves x to form the gradient of w"),
    ("x - w", checks.difference, False, "the difference saves nothing: its local derivatives are 1 and -1"),
    ("x ** 2 + w", checks.square_plus, True, "the square saves x, since its derivative is 2x"),
    ("torch.sin(x) + w", checks.sine_plus, True, "sin saves x, since its derivative is cos(x)"),
    ("x.exp() * w", checks.exp_times, False, "exp saves its output and the product saves exp(x) and w; none of them is x"),
    ("(x + 1) * w", checks.shifted_product, False, "the product saves x + 1, a new tensor; x itself is never saved"),
]
for run in page_runs + [check_mutation(*case) for case in cases]:
    check_stated_leaves(*run)


# A backward that fails for another reason (a vector z has no implicit cotangent) is not a detected change.
error = raised_by(mutation_detected, checks.product_and_sum_stacked)
expect(
    error is not None,
    "for an operation whose backward fails for another reason (z is a vector, so backward() needs a cotangent), "
    "mutation_detected returned an answer instead of letting that error through: only an error about an "
    "inplace operation means the change was caught; re-raise every error that is not about an inplace operation",
    "any-backward-error-is-mutation",
)
expect(
    isinstance(error, RuntimeError) and "scalar outputs" in str(error),
    f"for a vector z, backward() fails with PyTorch's RuntimeError about scalar outputs; mutation_detected let "
    f"{type(error).__name__}: {error} through instead"
    "; re-raise every error that is not about an inplace operation, unchanged",
)
### END HIDDEN TESTS

# %% [markdown] fc_summary
# ## What to take away
#
# * `backward()` consumes the saved tensors of the graph it walks; `.grad` of the leaves is
#   what stays. Retaining a graph keeps the saved tensors, and every call still adds into
#   `.grad`.
# * A version counter lets backward notice that a value it saved was changed in place, but
#   only for values that were actually saved; an update under `torch.no_grad()` is not
#   recorded, yet it can still invalidate a graph you meant to reuse.
# * When a gradient is `None`, doubled or refused, inspect the mechanism (which tensors are
#   leaves, what was saved, what was retained) rather than guessing from the symptom.
#
# Next: the cheat sheet and the decisions that keep training code out of these traps.
