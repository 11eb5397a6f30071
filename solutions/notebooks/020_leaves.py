# %% [markdown] intro
# # 2 · Which tensors get a `.grad`: leaves and intermediates
#
# Section 1 made one tensor that autograd tracks. This notebook looks at the bookkeeping
# around it: which operations get recorded, which tensors receive a `.grad`, and what it
# means when `.grad` is still `None`.
#
# You will
#
# 1. create a scaled parameter that is still a leaf,
# 2. read the gradient of a leaf *and* of an intermediate result,
# 3. diagnose a `None` gradient from the state of the tensors involved,
# 4. find out which dtypes may require gradients at all.
#
# **How to work.** Run the setup cell first. Replace the `NotImplementedError` lines of each
# answer cell with your code, run the cell, then run the check cell below it. The visible check
# tests what the exercise states on the page's own example and says what it checked; the grader
# runs hidden tests on other inputs and names the misconception it recognises, such as
# `[misconception: op-after-requires-grad]`.

# %% setup
import math

import torch

import autograd_checks as checks
from autograd_checks import beside_student, call_answer, expect, expect_close, expect_tensor, in_kernel, quiet, seeded

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# The labels of exercise 3, in the order in which the reasons are checked.
GRAD_NONE_REASONS = ("not_tracked", "non_leaf", "no_grad", "unused", "no_backward", "reset")

# %% [markdown] md_scaled_parameter
# ## What gets recorded, and what is a leaf
#
# In the default grad mode PyTorch records an operation when at least one of its inputs
# requires grad and the operation has a derivative. Everything else runs as plain arithmetic.
#
# * A tensor that does **not** require grad counts as a leaf, by convention: nothing is recorded
#   about it.
# * A tensor that requires grad and was made directly by you (no recorded operation produced it)
#   is a leaf as well. Its `grad_fn` is `None`.
# * The result of a recorded operation is an **intermediate** (a non-leaf): its `grad_fn` points
#   at the operation that made it.
#
# `backward()` adds gradients into the leaves that require grad. It does not keep the
# gradients of intermediates unless you ask for them.
#
# This matters when you initialise parameters. Small random weights are usually made by
# scaling normal draws, say by 0.01. Scale first and switch tracking on afterwards, as in
# `(torch.randn(3) * 0.01).requires_grad_()`, and you get a leaf. Switch tracking on first, as
# in `torch.randn(3, requires_grad=True) * 0.01`, and the multiplication is recorded: the
# result is an intermediate, and after `backward()` its `.grad` is still `None`. The update step
# then has no gradient to use: `torch.optim.SGD` refuses such a tensor outright ("can't optimize
# a non-leaf Tensor"), and a hand-written `p -= lr * p.grad` fails because `p.grad` is `None`.
#
# ### Exercise 1 (2 points)
#
# Write `scaled_parameter(shape, scale, seed)`: draw standard normal float64 values of the
# given `shape` with `torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))`,
# multiply them by `scale`, and return a tensor holding those values that requires grad and is
# a leaf. The grader rebuilds the same draws and compares every digit, so the values must be
# float64 from the draw on.

# %% answer answer_scaled_parameter
from solutions.reference.leaves import scaled_parameter

# %% test test_scaled_parameter points=2 targets=op-after-requires-grad,grad-on-by-default,numpy-default-dtype,cast-restores-precision
param = call_answer(scaled_parameter, (3,), 0.01, 0)
shown = "scaled_parameter((3,), 0.01, 0)"
expect_tensor(param, shown, shape=(3,))
expect(
    param.dtype == torch.float64,
    f"{shown} has dtype {param.dtype}: torch.randn makes float32 unless you pass dtype=torch.float64"
    "; pass it when you draw",
    "numpy-default-dtype",
)
expect(
    param.requires_grad,
    f"{shown} does not require grad, so backward() would never give it a .grad"
    "; call requires_grad_() on it once it is scaled",
    "grad-on-by-default",
)
expect(
    param.is_leaf,
    f"{shown} requires grad but is not a leaf (it has grad_fn {type(param.grad_fn).__name__}): "
    "the scaling ran after tracking was switched on; scale first, then call requires_grad_()",
    "op-after-requires-grad",
)
# The exercise gives the exact recipe, so a right answer matches it to the last bit.
drawn_in_float32 = torch.randn(3, generator=seeded(0))
expect(
    not any(torch.equal(param.detach(), cast) for cast in ((drawn_in_float32 * 0.01).double(), drawn_in_float32.double() * 0.01)),
    f"{shown} holds float32 draws cast to float64 afterwards: the cast keeps float32's rounding, "
    "so draw in float64 (dtype=torch.float64 in torch.randn)",
    "cast-restores-precision",
)
expect(
    torch.equal(param.detach(), torch.randn(3, dtype=torch.float64, generator=seeded(0)) * 0.01),
    f"{shown} does not hold the page's recipe: the seeded float64 normal draws times 0.01"
    ": draw from the seeded generator in float64, scale by 0.01, then call requires_grad_()",
)
print(
    "Checked on scaled_parameter((3,), 0.01, 0): shape, dtype float64, requires_grad, leaf, every digit of the "
    "page's recipe. The grader also tests other shapes, scales and seeds and a backward() through it."
)

### BEGIN HIDDEN TESTS
for shape, scale, seed in (((4, 2), 0.5, 7), ((), 3.0, 11), ((2, 3, 2), 0.001, 42), ((5,), 0.01, 1)):
    param = call_answer(scaled_parameter, shape, scale, seed)
    shown = f"scaled_parameter({shape}, {scale}, {seed})"
    expect_tensor(param, shown, shape=shape)
    expect(
        param.dtype == torch.float64,
        f"{shown} has dtype {param.dtype}: torch.randn makes float32 unless you pass dtype=torch.float64"
        "; pass it when you draw",
        "numpy-default-dtype",
    )
    expect(
        param.requires_grad,
        f"{shown} does not require grad, so backward() would never give it a .grad"
        "; call requires_grad_() on it once it is scaled",
        "grad-on-by-default",
    )
    expect(
        param.is_leaf,
        f"{shown} requires grad but is not a leaf (it has grad_fn {type(param.grad_fn).__name__}): "
        "the scaling ran after tracking was switched on, so backward() leaves its .grad at None; "
        "scale first, then call requires_grad_()",
        "op-after-requires-grad",
    )
    drawn = torch.randn(shape, dtype=torch.float64, generator=seeded(seed)) * scale
    drawn_in_float32 = (torch.randn(shape, generator=seeded(seed)) * scale).double()
    expect(
        not torch.equal(param.detach(), drawn_in_float32),
        f"{shown} holds float32 draws cast to float64 afterwards: the cast keeps float32's rounding, "
        "so draw in float64 (dtype=torch.float64 in torch.randn)",
        "cast-restores-precision",
    )
    # Drawing and scaling are deterministic, so a right answer matches to the last bit.
    expect(
        torch.equal(param.detach(), drawn),
        f"{shown} does not hold the seeded float64 normal draws times {scale}"
        ": draw from the seeded generator in float64, scale, then call requires_grad_()",
    )
    (param * param).sum().backward()
    expect(
        param.grad is not None,
        f"after a backward() through {shown}, its .grad is still None"
        ": return the scaled tensor itself, made a leaf with requires_grad_() after scaling",
    )
    expect_close(
        param.grad,
        2 * drawn,
        f"the gradient of sum(p * p) stored in {shown}.grad is not 2 p"
        ": return a float64 leaf that requires grad, so autograd stores 2 p in its .grad",
    )
### END HIDDEN TESTS

# %% [markdown] md_chain_gradients
# ## Gradients of leaves and of intermediates
#
# Take the chain $x \to y = x^2 \to z = \sin y \to w = z + 5$. By the chain rule
# $\partial w / \partial y = \cos y = \cos(x^2)$ and
# $\partial w / \partial x = \cos(x^2) \cdot 2x$. At $x = 3$ that is $\cos 9$ for $y$ and
# $6 \cos 9$ for $x$.
#
# After `w.backward()`, `x.grad` holds $6\cos 9$ because `x` is a leaf that requires grad.
# `y` is an intermediate (`y.is_leaf` is `False`, `y.grad_fn` is a `PowBackward0` node), so
# its gradient is passed on to `x` and then dropped: `y.grad` is `None`, and reading it makes
# PyTorch warn you. To keep it, call `y.retain_grad()` **before** `backward()`.
#
# ### Exercise 2 (3 points)
#
# Write `chain_gradients(x)`: `x` is a float64 tensor holding one number, a leaf that requires
# grad. Build the chain above from `x`, call `backward()` on `w`, and return the pair
# `(x.grad, y.grad)`. Let autograd do the differentiation: the grader checks that both
# gradients are the tensors `backward()` stored, so a formula such as `torch.cos(y)` in place
# of `y.grad` does not count, even when its value is right.

# %% answer answer_chain_gradients
from solutions.reference.leaves import chain_gradients

# %% test test_chain_gradients points=3 targets=intermediate-grad-not-retained,grad-by-formula,cut-path-carries-gradient
def retained_during(function, *args):
    """Call `function`: its result, the tensors on which it called retain_grad(), and the backward passes it ran."""
    with checks.noting_retain_grad([]) as retained, checks.noting_backward_passes([]) as passes:
        result = call_answer(function, *args)
    return result, retained, passes


def stored_in(value, stored):
    """True when `value` is the gradient `stored` by autograd (itself, or a view of it)."""
    return (
        stored is not None
        and isinstance(value, torch.Tensor)
        and value.shape == stored.shape
        and value.data_ptr() == stored.data_ptr()
    )


def check_chain_gradients(point):
    """Every property the exercise states, at x = point: autograd stored both gradients, with the chain rule's values."""
    deliveries = []  # what backward() hands to x; a .grad assigned by hand never passes here
    x = in_kernel(checks.leaf_noting_deliveries, point, deliveries)
    pair, retained, passes = retained_during(chain_gradients, x)
    shown = f"chain_gradients(x) at x = {point:.4g}"
    delivered = checks.gradients_from_backward(deliveries, shown)
    expect(
        isinstance(pair, tuple) and len(pair) == 2,
        f"{shown} should return a pair (x.grad, y.grad)"
        ": return a tuple of the two tensors, x.grad first",
    )
    x_grad, y_grad = pair
    expect(
        x.grad is not None or delivered or not passes,
        f"x.grad is still None after {shown}, though a backward() ran without reaching x: the path from x to w was cut (by detach(), "
        "torch.no_grad() or a new tensor made from x's value), so the gradient stopped before x; build y = x**2 "
        "from x itself and keep y's gradient with y.retain_grad() before w.backward()",
        "cut-path-carries-gradient",
    )
    expect(
        x.grad is not None,
        f"x.grad is still None after {shown}: the gradients must be stored by w.backward(), not written as formulas"
        "; call w.backward() inside the function and return the .grad it stores",
        "grad-by-formula",
    )
    expect(
        len(delivered) > 0,
        f"x.grad after {shown} was assigned by hand: backward() never delivered a gradient to x; "
        "build w from x and call w.backward() instead of writing the derivative as a formula",
        "grad-by-formula",
    )
    expect_tensor(x_grad, f"the first element returned by {shown}", shape=())
    expect(
        torch.equal(x_grad, x.grad),
        f"the first element returned by {shown} is not x.grad, the value backward() stored"
        "; return x.grad itself after w.backward()",
        "grad-by-formula",
    )
    expect(
        y_grad is not None,
        f"the second element returned by {shown} is None: y = x**2 is not a leaf, so backward() "
        "does not keep its gradient unless y.retain_grad() was called before backward()"
        "; call y.retain_grad() before w.backward() and return y.grad",
        "intermediate-grad-not-retained",
    )
    expect_tensor(y_grad, f"the second element returned by {shown}", shape=())
    expect(
        any(stored_in(y_grad, stored) for stored in in_kernel(checks.stored_gradients, retained)),
        f"the second element returned by {shown} is not the gradient that backward() stored in y = x**2 "
        "(a formula such as cos(y) has the right value but not autograd's origin): call y.retain_grad() "
        "before w.backward() and return y.grad",
        "grad-by-formula",
    )
    square = torch.tensor(point, dtype=torch.float64) ** 2
    expect_close(
        x_grad,
        2 * point * torch.cos(square),
        f"x.grad from {shown} is not 2x cos(x^2)"
        ": call w.backward() on w = sin(x**2) summed, and return x.grad as backward() stored it",
        rtol=1e-10,
        atol=1e-12,
    )
    expect_close(
        y_grad,
        torch.cos(square),
        f"y.grad from {shown} is not cos(x^2)"
        ": call y.retain_grad() on y = x**2 before w.backward(), and return y.grad as backward() stored it",
        rtol=1e-10,
        atol=1e-12,
    )


check_chain_gradients(3.0)
print(
    "Checked at the page's x = 3: a pair of the gradients backward() stored in x and y (y kept by retain_grad), "
    "with the values 6 cos 9 and cos 9. The grader also tests other points."
)

### BEGIN HIDDEN TESTS
for point in [-1.3, 0.4, 2.2, 0.0] + (torch.rand(3, dtype=torch.float64, generator=seeded(20)) * 4 - 2).tolist():
    check_chain_gradients(point)
### END HIDDEN TESTS

# %% [markdown] md_why_grad_is_none
# ## Why is `.grad` None?
#
# "It is not a leaf" is one reason for a missing gradient, but far from the only one. Before
# you trust a diagnosis, look at the state: `requires_grad`, `is_leaf`, `grad_fn`, whether the
# tensor is connected to the output at all, and whether `backward()` has run. Each reason
# below has a label; check them **in this order** and return the first that applies.
#
# | label | what the state shows | why `.grad` is `None` |
# |---|---|---|
# | `"not_tracked"` | `tensor.requires_grad` is `False` | autograd never tracks it; such a tensor is a leaf by convention, but nothing is accumulated into it (a data input, or a value computed under `torch.no_grad()`) |
# | `"non_leaf"` | it requires grad, but `tensor.is_leaf` is `False` | it is an intermediate, and `retain_grad()` was not called |
# | `"no_grad"` | `output.requires_grad` is `False` | nothing was recorded for the output, so there is nothing to run backward through: it was computed inside `torch.no_grad()`, or in grad mode from tensors none of which requires grad |
# | `"unused"` | the tensor itself is not a leaf of the graph behind `output.grad_fn` | the output does not depend on it (an unused or disconnected parameter) |
# | `"no_backward"` | connected, and `backward()` has not run | nothing has been accumulated yet |
# | `"reset"` | connected, and `backward()` did run | the gradient was there and was cleared afterwards, e.g. by `p.grad = None` or `optimizer.zero_grad(set_to_none=True)` |
#
# To test whether a leaf is connected, walk the graph: every node has `next_functions`, a
# tuple of `(node, index)` pairs pointing at the nodes that produced its inputs (`None` for
# inputs that do not require grad). A leaf that requires grad shows up as an
# `AccumulateGrad` node whose `.variable` is that very tensor. Two tensors can hold equal
# values and still be different tensors, and only the one the output was built from is
# connected. An `output` that requires grad but is itself a leaf has no `grad_fn`, so no graph
# stands behind it: every other tensor is unused for it.
#
# For example, after
# ```python
# w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
# loss = (w * 0.5).sum()
# ```
# the tensor `w` is connected to `loss` and backward has not run yet, so the label is
# `"no_backward"`. The tuple `GRAD_NONE_REASONS` from the setup cell lists the labels.
#
# ### Exercise 3 (4 points)
#
# Write `why_grad_is_none(tensor, output, backward_ran)`. You are given a tensor whose `.grad`
# is `None`, the `output` that `backward()` was (or would have been) called on, and whether
# `output.backward()` was called. Return the label that explains the missing gradient. The
# hidden tests build their own situations, so decide from the state, not from examples.

# %% answer answer_why_grad_is_none
from solutions.reference.leaves import why_grad_is_none

# %% test test_why_grad_is_none points=4 targets=none-grad-means-nonleaf,graph-membership-by-value,missing-grad-fn-means-no-grad,shared-storage-means-same-tensor
w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
loss = in_kernel(checks.halved_sum, w)  # the graph is built beside your code, where the answer runs
label = call_answer(why_grad_is_none, w, loss, False)
shown = "for the page's w and loss = (w * 0.5).sum(), before backward()"
expect(
    isinstance(label, str) and label in GRAD_NONE_REASONS,
    f"{shown}, why_grad_is_none returned {label!r}, which is not one of {GRAD_NONE_REASONS}"
    ": return one of these strings, exactly as written",
)
expect(
    label != "non_leaf",
    f"{shown} you answered 'non_leaf', but w requires grad and is a leaf: a None gradient has other causes "
    "(not tracked, no_grad, unused, no backward yet, reset)"
    ": check whether w was used, tracked and reached by a backward() first",
    "none-grad-means-nonleaf",
)
expect(
    label == "no_backward",
    f"{shown} you answered {label!r}, but the page works it out as 'no_backward'"
    ": check the situations in the order the page gives them (here backward() has not run yet)",
)
# The page: equal values can be another tensor, and an output that is a leaf has no graph behind it.
twin = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
label = call_answer(why_grad_is_none, twin, loss, False)
expect(
    label not in ("no_backward", "reset"),
    f"for a new leaf equal in value to w (the loss was built from w) you answered {label!r}: it holds the same "
    "values, but it is another tensor; compare the AccumulateGrad node's .variable with `is`, not by value",
    "graph-membership-by-value",
)
expect(
    label == "unused",
    f"for a new leaf equal in value to w you answered {label!r}, but the loss does not use it"
    ": check whether the loss was computed from this very tensor (is, not equal values)",
)
leaf_output = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
label = call_answer(why_grad_is_none, w, leaf_output, False)
expect(
    label != "no_grad",
    "for w with an output that is another leaf requiring grad you answered 'no_grad', but the output requires grad: "
    "it is a leaf, which has no grad_fn although autograd tracks it; output.requires_grad is what shows that "
    "nothing was recorded; check output.requires_grad for that",
    "missing-grad-fn-means-no-grad",
)
expect(
    label == "unused",
    f"for w with an output that is another leaf you answered {label!r}, not 'unused'"
    ": check whether the output was computed from w (is, not equal values)",
)
print(
    "Checked on the page's w and loss: 'no_backward'; a leaf equal to w in value: 'unused'; an output that is "
    "another leaf: 'unused'. The grader also tests every other label and twins that share w's memory."
)

### BEGIN HIDDEN TESTS
# What each situation of checks.grad_none_situations() is, and the label it calls for; both stay with the grader.
expected_labels = {
    "spare-parameter": ("a second parameter that the loss never used, after backward()", "unused"),
    "scaled-weight": ("weight = base * 0.01 with base requiring grad, after backward()", "non_leaf"),
    "loss-under-no-grad": ("a parameter whose loss was computed inside torch.no_grad()", "no_grad"),
    "loss-of-untracked-tensors": ("a parameter whose loss was computed in grad mode from tensors that do not require grad", "no_grad"),
    "data-input": ("the data input x of pred = w * x + b, after backward()", "not_tracked"),
    "after-sgd-step": ("a parameter after backward() and an SGD step that cleared its gradient", "reset"),
    "deep-before-backward": ("a parameter used three operations deep, before any backward()", "no_backward"),
    "hidden-activation": ("the activation tanh(W @ inputs), after backward()", "non_leaf"),
    "frozen-under-no-grad": ("frozen = m * 2 computed inside torch.no_grad(), after backward()", "not_tracked"),
    "unused-before-backward": ("a parameter the output does not use, before any backward()", "unused"),
    "grad-set-to-none": ("a parameter whose .grad was set to None after backward()", "reset"),
    "equal-twin": ("a parameter equal in value to the one the loss used, after backward()", "unused"),
    "output-is-a-leaf": ("a parameter, with an output that is another leaf requiring grad", "unused"),
    "detached-twin": ("used.detach().requires_grad_(), sharing the memory of the leaf the loss used, after backward()", "unused"),
    "view-twin": ("a leaf made from a view of the used leaf's memory, before any backward()", "unused"),
}
# Twins that share memory with a leaf of the graph but are other tensors: memory is not identity.
sharing_memory = {"detached-twin", "view-twin"}
situations = in_kernel(checks.grad_none_situations) + in_kernel(checks.storage_sharing_situations)
cases = [
    (*expected_labels[key][:1], tensor, output, backward_ran, expected_labels[key][1], key in sharing_memory)
    for key, tensor, output, backward_ran in situations
]
expect(
    len(cases) == len(expected_labels),
    "the test's situations and labels do not match"
    ": report this to the course staff, since the test itself is out of step",
)

for description, tensor, output, backward_ran, expected, shares_memory in cases:
    label = call_answer(why_grad_is_none, tensor, output, backward_ran)
    expect(
        isinstance(label, str) and label in GRAD_NONE_REASONS,
        f"for {description}, why_grad_is_none returned {label!r}, which is not one of {GRAD_NONE_REASONS}"
        ": return one of these strings, exactly as written",
    )
    expect(
        label != "non_leaf" or expected == "non_leaf",
        f"for {description} you answered 'non_leaf', but requires_grad={tensor.requires_grad} and "
        f"is_leaf={tensor.is_leaf}: a None gradient has other causes (not tracked, no_grad, unused, "
        "no backward yet, reset): check whether the tensor was used, tracked and reached by a backward() first",
        "none-grad-means-nonleaf",
    )
    expect(
        not (description.startswith("a parameter equal") and label in ("no_backward", "reset")),
        f"for {description} you answered {label!r}: a leaf of the graph holds the same values, but it is another "
        "tensor; compare the AccumulateGrad node's .variable with `is`, not by value",
        "graph-membership-by-value",
    )
    expect(
        not (shares_memory and label in ("no_backward", "reset")),
        f"for {description} you answered {label!r}: it shares its memory with a leaf of the graph, but it is another "
        "tensor object, and autograd gives it no gradient; compare the AccumulateGrad node's .variable with `is`, "
        "not by data_ptr() or storage",
        "shared-storage-means-same-tensor",
    )
    expect(
        not (description.endswith("another leaf requiring grad") and label == "no_grad"),
        f"for {description} you answered 'no_grad', but the output requires grad: it is a leaf, which has no "
        "grad_fn although autograd tracks it; output.requires_grad is what shows that nothing was recorded"
        "; check output.requires_grad for that",
        "missing-grad-fn-means-no-grad",
    )
    expect(
        label == expected,
        f"for {description} you answered {label!r}, but the state says {expected!r}: check requires_grad, "
        "is_leaf, output.requires_grad, the graph behind output.grad_fn, then backward_ran, in that order",
    )
### END HIDDEN TESTS

# %% [markdown] md_can_require_grad
# ## Which dtypes can require gradients?
#
# A derivative needs values that can move by arbitrarily small amounts. That is why only
# floating-point and complex tensors can require grad. Integer and boolean tensors cannot:
# class labels stored as `int64`, for instance, are indices, and
# `torch.tensor([0, 3], requires_grad=True)` raises a `RuntimeError`. A float64 weight, on the
# other hand, is fine.
#
# ### Exercise 4 (2 points)
#
# Write `can_require_grad(dtype)`: return `True` if a tensor of that `dtype` may require
# gradients and `False` if not. How you find out is up to you. The hidden tests ask about
# every dtype that your version of PyTorch defines, rare ones this page does not name included
# (half-precision complex, 8-bit and packed 4-bit floats, unsigned and sub-byte integers,
# quantized integers, raw bit types), and your function must answer for each without raising.
# The rule above decides every one of them: floating-point and complex dtypes may require
# gradients, all others may not.

# %% answer answer_can_require_grad
from solutions.reference.leaves import can_require_grad

# %% test test_can_require_grad points=2 targets=integer-labels-require-grad,complex-grad-unsupported,floating-dtypes-listed-by-hand
dtype_errors = (
    (
        "can require gradients",
        None,
        "PyTorch refused requires_grad for this dtype and the RuntimeError escaped from your function: "
        "catch it and return False",
    ),
)
page_answers = {}
for dtype in (torch.float64, torch.float16, torch.complex64, torch.int64, torch.bool):  # the dtypes the page names
    page_answers[dtype] = call_answer(can_require_grad, dtype, known_errors=dtype_errors)
    checks.expect_python_bool(page_answers[dtype], f"can_require_grad({dtype})")
expect(
    page_answers[torch.float64],
    "can_require_grad(torch.float64) is False, but a float64 weight can require gradients"
    ": return True for every floating-point dtype",
)
expect(
    page_answers[torch.float16],
    "can_require_grad(torch.float16) is False, but every floating-point dtype can require gradients, "
    "including the half-precision ones: ask the dtype itself (dtype.is_floating_point)",
)
expect(
    page_answers[torch.complex64],
    "can_require_grad(torch.complex64) is False, but complex tensors can require gradients too"
    ": return True for complex dtypes as well (dtype.is_complex)",
    "complex-grad-unsupported",
)
expect(
    not page_answers[torch.int64],
    "can_require_grad(torch.int64) is True, but integer tensors (such as int64 class labels) cannot require gradients"
    ": return False for every integer dtype",
    "integer-labels-require-grad",
)
expect(
    not page_answers[torch.bool],
    "can_require_grad(torch.bool) is True, but boolean tensors cannot require gradients"
    ": return False for torch.bool",
)
print(
    "Checked on the dtypes the page names: float64, float16 and complex64 may require gradients, int64 and bool "
    "may not. The grader also asks about every other dtype your PyTorch defines."
)

### BEGIN HIDDEN TESTS
# Every dtype this torch defines (aliases such as torch.half counted once), and what PyTorch itself accepts.
every_dtype = sorted({value for value in vars(torch).values() if isinstance(value, torch.dtype)}, key=str)
accepted = {}
with quiet():  # experimental dtypes warn when a tensor of theirs is made
    for dtype in every_dtype:
        try:
            probe = torch.empty(0, dtype=dtype)
        except (RuntimeError, TypeError):
            continue  # a dtype no tensor can be made of has no answer to check
        try:
            probe.requires_grad_()
        except RuntimeError:
            accepted[dtype] = False
        else:
            accepted[dtype] = True
for dtype, expected in accepted.items():
    expect(
        expected == (dtype.is_floating_point or dtype.is_complex),
        f"the page's rule (floating-point and complex dtypes only) no longer matches what PyTorch accepts for {dtype}"
        ": report this to the course staff, since the installed PyTorch differs from the page",
    )
answers = {}
for dtype in accepted:
    answer = call_answer(can_require_grad, dtype, known_errors=dtype_errors)
    checks.expect_python_bool(answer, f"can_require_grad({dtype})")
    answers[dtype] = answer


def kind_accepted_elsewhere(dtype):
    """Whether the answer lets another dtype of the same kind (floating, or complex) require grad."""
    return any(
        answers[other] for other in accepted if other != dtype and other.is_floating_point == dtype.is_floating_point
    )


for dtype, expected in accepted.items():
    answer = answers[dtype]
    expect(
        answer or not dtype.is_complex or answers[torch.complex64] or answers[torch.complex128],
        f"can_require_grad({dtype}) is False, but complex tensors can require gradients too"
        ": return True for complex dtypes as well (dtype.is_complex)",
        "complex-grad-unsupported",
    )
    expect(
        answer or not expected or not kind_accepted_elsewhere(dtype),
        f"can_require_grad({dtype}) is False, though you answer True for other dtypes of its kind: "
        f"{dtype} is a floating-point or complex dtype too, and PyTorch lets it require gradients; a list of the "
        "dtypes you know misses the rarer ones, so ask the dtype (dtype.is_floating_point, dtype.is_complex)",
        "floating-dtypes-listed-by-hand",
    )
    expect(
        expected or not answer or dtype == torch.bool,
        f"can_require_grad({dtype}) is True, but integer tensors (such as int64 class labels) cannot require gradients"
        ": return False for every integer dtype",
        "integer-labels-require-grad",
    )
    expect(
        answer or not dtype.is_floating_point,
        f"can_require_grad({dtype}) is False, but every floating-point dtype can require gradients, "
        "including the half-precision ones (float16 and bfloat16): ask the dtype itself (dtype.is_floating_point)",
    )
    expect(
        answer == expected,
        f"can_require_grad({dtype}) should be {expected}"
        ": decide from the dtype itself (dtype.is_floating_point or dtype.is_complex)",
    )
### END HIDDEN TESTS

# %% [markdown] md_next
# ## Summary
#
# * Recording happens only for operations with an input that requires grad (in grad mode).
# * Leaves: tensors that do not require grad, and tensors you made that require grad.
#   Intermediates have a `grad_fn` and keep their gradient only after `retain_grad()`.
# * Make the final values first, then switch tracking on.
# * A `None` gradient can mean: not tracked, not a leaf, computed under `no_grad`, unused,
#   no backward yet, or reset. Look at the state before you conclude.
# * Only floating-point and complex tensors can require grad.
#
# Next, in section 2.1: what `backward()` needs when the output has more than one element.
