# %% [markdown] intro
# # 1 · Tensors that remember how they were computed
#
# NumPy gave you arrays and left the derivatives to you. A PyTorch tensor looks like an array,
# but it also carries a device, a dtype, a memory layout and, when you ask for it, **autograd
# metadata**: a record of the operations that produced it, so that PyTorch can later pull a
# derivative back through them.
#
# In this notebook you will
#
# 1. build a tensor that autograd will track,
# 2. let autograd differentiate a sum of squares by calling `backward()`,
# 3. turn that into a small gradient routine for any scalar function.
#
# **How to work.** Run the setup cell first. Each exercise has an answer cell whose body
# raises `NotImplementedError`: replace those lines with your code, run the cell, then run the
# check cell under it. The visible check tests what the exercise states on the page's own example
# and says what it checked; the grader runs further tests on other inputs. When a test fails, its message names the
# misconception it spotted, such as `[misconception: grad-by-formula]`.

# %% setup
import math

import torch

import functools

import autograd_checks as checks
from autograd_checks import call_answer, central_difference, expect, expect_close, expect_tensor, in_kernel, seeded

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# %% [markdown] md_float64_leaf
# ## Tensors are not just arrays
#
# Two things surprise people who come from NumPy.
#
# * **The default dtype differs.** `torch.tensor([1., 2., 3.])` is `float32`, not `float64`;
#   from Python ints you get `int64`. Ask for `dtype=torch.float64` when you want double
#   precision (all checks in this problem set compare in float64). The dtype is chosen when the
#   tensor is built, and the digits with it: `torch.tensor([1.1])` holds 1.100000023841858, and
#   `.double()` on that tensor keeps exactly those digits, while `torch.tensor([1.1],
#   dtype=torch.float64)` holds 1.1.
# * **Tracking is opt-in.** A tensor takes part in autograd only if it *requires grad*.
#   A tensor that you create directly with `requires_grad=True` has no producing operation:
#   it is a **leaf**, and `backward()` will store derivatives in its `.grad`. Anything you
#   compute from it afterwards (with grad mode on, the default) is a non-leaf.
#
# For the vector $x = (1, 2, 3)$ in float64, `x @ x` is 14 and `x + 1` is $(2, 3, 4)$, exactly
# as with NumPy.
#
# ### Exercise 1 (2 points)
#
# Write `float64_leaf(values)`: from a list of plain Python numbers (ints or floats), return
# a float64 tensor that requires grad and is a leaf, holding the given numbers to float64's digits
# (`float64_leaf([1.1])` holds 1.1, not 1.100000023841858).

# %% answer answer_float64_leaf
from solutions.reference.history import float64_leaf

# %% test test_float64_leaf points=2 targets=numpy-default-dtype,grad-on-by-default,op-after-requires-grad,cast-restores-precision
leaf = call_answer(float64_leaf, [1.0, 2.0, 3.0])
expect_tensor(leaf, "float64_leaf([1.0, 2.0, 3.0])", shape=(3,))
expect(
    leaf.dtype == torch.float64,
    f"float64_leaf([1.0, 2.0, 3.0]) has dtype {leaf.dtype}: torch.tensor does not pick float64 unless you ask for it"
    "; pass dtype=torch.float64 when you build it",
    "numpy-default-dtype",
)
expect(
    leaf.requires_grad,
    "float64_leaf([1.0, 2.0, 3.0]) does not require grad, so backward() would never fill its .grad"
    "; build it with requires_grad=True",
    "grad-on-by-default",
)
expect(
    leaf.is_leaf,
    "float64_leaf([1.0, 2.0, 3.0]) requires grad but is not a leaf: an operation (such as .double() or .to()) ran "
    "after tracking was switched on; build the tensor as float64 first, then set requires_grad",
    "op-after-requires-grad",
)
expect(
    leaf.detach().tolist() == [1.0, 2.0, 3.0],
    "float64_leaf([1.0, 2.0, 3.0]) does not hold 1, 2 and 3"
    ": build it from the numbers it is given, in their order",
)
# The page's 1.1, which float32 cannot hold: a float64 leaf built from it keeps every digit.
leaf = call_answer(float64_leaf, [1.1])
expect_tensor(leaf, "float64_leaf([1.1])", shape=(1,))
float32_digits = torch.tensor([1.1], dtype=torch.float32).double().tolist()
expect(
    leaf.detach().tolist() != float32_digits,
    f"float64_leaf([1.1]) holds {float32_digits[0]!r}, not 1.1: it was built in float32 and cast to float64, "
    "which keeps float32's rounding; ask for float64 when you build it",
    "cast-restores-precision",
)
expect(
    leaf.detach().tolist() == [1.1],
    f"float64_leaf([1.1]) holds {leaf.detach().tolist()}, not [1.1]"
    ": build the tensor from the given numbers with dtype=torch.float64",
)
print(
    "Checked on the page's examples [1.0, 2.0, 3.0] and [1.1]: shape, dtype float64, requires_grad, leaf, values "
    "to float64's digits. The grader also tests other inputs."
)

### BEGIN HIDDEN TESTS
for values in ([1.0, 2.0, 3.0], [1, 2, 3], [-0.5], [0.25, 4, -7.0, 1e-3], [0.1, -2.7, 1 / 3]):
    leaf = call_answer(float64_leaf, values)
    shown = f"float64_leaf({values})"
    expect_tensor(leaf, shown, shape=(len(values),))
    expect(
        leaf.dtype == torch.float64,
        f"{shown} has dtype {leaf.dtype}: torch.tensor does not pick float64 unless you ask for it"
        "; pass dtype=torch.float64 when you build it",
        "numpy-default-dtype",
    )
    expect(
        leaf.requires_grad,
        f"{shown} does not require grad, so backward() would never fill its .grad; build it with requires_grad=True",
        "grad-on-by-default",
    )
    expect(
        leaf.is_leaf,
        f"{shown} requires grad but is not a leaf (it was produced by {type(leaf.grad_fn).__name__}): "
        "an operation (such as .double() or .to()) ran after tracking was switched on; build the tensor as float64 "
        "first, then set requires_grad",
        "op-after-requires-grad",
    )
    expect_close(
        leaf,
        torch.tensor(values, dtype=torch.float64),
        f"{shown} does not hold the given numbers"
        ": build it from the numbers it is given, in their order, with dtype=torch.float64",
    )
    # Converting Python numbers is exact in float64, so every digit must survive.
    expect(
        torch.equal(leaf.detach(), torch.tensor(values, dtype=torch.float64)),
        f"{shown} holds the numbers only to float32's digits: a tensor built in float32 and cast to float64 "
        "keeps float32's rounding; ask for float64 when you build it",
        "cast-restores-precision",
    )
### END HIDDEN TESTS

# %% [markdown] md_square_sum_grad
# ## Asking autograd for a derivative
#
# Let $y = \sum_i x_i^2$. Each term depends on one coordinate only, so
# $\partial y / \partial x_i = 2 x_i$; at $x = (1, 2, 3)$ the gradient is $(2, 4, 6)$.
# You know that formula, but the point of autograd is that you do not need it: call
# `y.backward()` on the scalar `y` and PyTorch walks the recorded operations backwards,
# applying each operation's local derivative (its *pullback*), and adds the result into
# `x.grad`. The gradient is only as precise as the arithmetic behind it: at $x = (1.1)$ it is
# 2.2 in float64, and a sum of squares computed in float32 somewhere gives 2.200000047683716
# even when `x.grad` comes back as float64.
#
# Reverse mode does not invert anything: `sum` maps many numbers to one and has no inverse,
# yet it is perfectly differentiable.
#
# ### Exercise 2 (3 points)
#
# Write `square_sum_grad(x)`: given a float64 leaf `x` that requires grad, compute
# `sum(x * x)`, call `backward()` and return `x.grad`. The grader checks that the gradient
# really came from `backward()` on the `x` it passed in.

# %% answer answer_square_sum_grad
from solutions.reference.history import square_sum_grad

# %% test test_square_sum_grad points=3 targets=grad-by-formula,vector-backward-without-cotangent,cast-restores-precision,cut-path-carries-gradient
# x is handed over requiring grad, so a backward() that finds nothing to differentiate means the sum was
# cut off from x (torch.no_grad() or detach()), not that x was never marked: this row comes before the shared one.
CUT_PATH_ERRORS = (
    ("does not require grad", "cut-path-carries-gradient",
     "backward() found nothing recorded behind the sum, though the x handed over requires grad: sum(x * x) was "
     "computed inside torch.no_grad() or from a detached copy of x; compute it from x itself, outside "
     "torch.no_grad(), then call backward() on it"),
) + checks.COMMON_ERRORS


def check_square_sum_grad(start):
    """square_sum_grad on a float64 leaf holding `start`: x.grad filled by one backward(), 2x, and returned."""
    size = start.numel()
    deliveries = []  # what x's hook saw, and whether a backward pass handed it over
    x = in_kernel(checks.leaf_noting_deliveries, start, deliveries)
    with checks.noting_backward_passes([]) as passes:
        result = call_answer(square_sum_grad, x, known_errors=CUT_PATH_ERRORS)
    delivered = checks.gradients_from_backward(deliveries, "square_sum_grad(x)")
    expect(
        x.grad is not None or delivered or not passes,
        "x.grad is still None after square_sum_grad(x), though a backward() ran without reaching x: the sum it walked was cut off "
        "from x (computed inside torch.no_grad() or from a detached copy of x); compute sum(x * x) from x itself, "
        "outside torch.no_grad(), and call backward() on it",
        "cut-path-carries-gradient",
    )
    expect(
        x.grad is not None,
        "x.grad is still None after square_sum_grad(x): the gradient must come from calling backward()"
        "; call backward() on sum(x * x) inside square_sum_grad",
        "grad-by-formula",
    )
    expect(
        len(delivered) == 1,
        f"backward() delivered a gradient to x {len(delivered)} times during square_sum_grad(x): "
        "x.grad must be filled by one backward() call, not written by hand"
        "; call backward() once on sum(x * x) and leave x.grad to it",
        "grad-by-formula",
    )
    expect_tensor(x.grad, "x.grad after square_sum_grad(x)", shape=(size,))
    exact = 2 * start  # doubling is exact in float64, and so is autograd's x + x for the product's two factors
    float64_gap = ((x.grad.detach().double() - exact).abs() - 1e-12 * exact.abs()).max().item()
    float32_close = torch.allclose(x.grad.detach().double(), exact, rtol=1e-4, atol=0.0)  # float32 subnormals keep fewer digits
    if float64_gap > 0 and float32_close:
        worst = int(((x.grad.detach().double() - exact).abs() / exact.abs()).argmax())
        expect(
            False,
            f"at x = {start[worst].item()!r}, x.grad is {x.grad[worst].item()!r} but the float64 derivative 2x is "
            f"{exact[worst].item()!r}: they agree only to float32's digits, so the sum of squares was computed in "
            "float32 somewhere; keep every step in float64 (a cast back does not restore the digits)",
            "cast-restores-precision",
        )
    expect_close(
        x.grad, exact, "after your backward() x.grad is not the derivative of sum(x * x)"
        ": call backward() on sum(x * x) computed from x itself, in float64", rtol=1e-12, atol=0.0
    )
    expect_tensor(result, "square_sum_grad(x)", shape=(size,))
    expect(
        not result.requires_grad and torch.equal(result, x.grad),
        "square_sum_grad(x) must return x.grad, the gradient stored by backward(), not a tensor computed from x"
        "; return x.grad itself",
        "grad-by-formula",
    )


check_square_sum_grad(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
check_square_sum_grad(torch.tensor([1.1], dtype=torch.float64))  # the page's number that float32 cannot hold
print(
    "Checked on the page's x = [1., 2., 3.] and x = [1.1]: x.grad filled by one backward() with 2x = [2., 4., 6.] "
    "and 2.2 to float64's digits, and x.grad returned. The grader also tests other points."
)

### BEGIN HIDDEN TESTS
# Seeded draws, and numbers that float32 cannot hold: 1 + 2**-30 rounds to 1, and the tiny and huge
# magnitudes lose digits too, so a sum of squares computed in float32 somewhere shows in the gradient.
starts = [torch.randn(size, dtype=torch.float64, generator=seeded(seed)) for seed, size in ((0, 3), (1, 5), (2, 1))]
starts.append(torch.tensor([1 + 2**-30, -(3 + 2**-27), 1e-40, 3.0000001e30], dtype=torch.float64))
for start in starts:
    check_square_sum_grad(start)
### END HIDDEN TESTS

# %% [markdown] md_gradient_at
# ## A gradient routine for any scalar function
#
# The same three steps work for any function that turns a tensor into one number: create a
# leaf that requires grad at the point of interest, evaluate the function, call `backward()`
# on the one-element result, read `.grad` from the leaf. Autograd records the operations as
# they run, so ordinary Python code (indexing, products, `torch.sin`, ...) is fine. One call of
# the function on a tracked tensor is all it takes: no nudging of the inputs, as finite
# differences would need. The point must be float64 from the start: the sum of squares at
# $(1.1)$ has gradient 2.2, and a float32 point gives 2.200000047683716 however it is cast afterwards.
#
# ### Exercise 3 (3 points)
#
# Write `gradient_at(function, values)`: `values` is a list of numbers, `function` maps a
# float64 tensor to a one-element tensor. Return the gradient of `function` at `values` as a
# float64 tensor of the same length. Let autograd differentiate: the grader checks that your
# code evaluates `function` on a tensor that requires grad, and compares the result with
# finite differences on several functions.

# %% answer answer_gradient_at
from solutions.reference.history import gradient_at

# %% test test_gradient_at points=3 targets=grad-on-by-default,numpy-default-dtype,autodiff-is-finite-differences,cast-restores-precision,grad-by-formula
def sines_gradient(t):
    return torch.stack([t[0].cos() * t[1].sin(), t[0].sin() * t[1].cos()])


def check_gradient_at(name, function, values, closed_form):
    """gradient_at(function, values): one evaluation on a tracked float64 leaf, against differences and the closed form."""
    calls, grad_modes = [], []
    noted = functools.partial(checks.noting_calls_and_grad_mode, function, calls, grad_modes)
    gradient = call_answer(gradient_at, noted, values)
    shown = f"gradient_at({name}, {values})"
    expect(
        calls,
        f"{shown} never called the function it was given, so autograd computed nothing: evaluate the function on a "
        "float64 leaf with requires_grad=True, call backward() on its result and return the leaf's .grad, not a "
        "derivative written out by hand",
        "grad-by-formula",
    )
    expect(
        any(calls) or len(calls) == 1,
        f"{shown} evaluated the function {len(calls)} times, never on a tensor that requires grad: "
        "that is a finite-difference estimate, not autograd; evaluate it once on a leaf with "
        "requires_grad=True and call backward() on the result",
        "autodiff-is-finite-differences",
    )
    expect(
        any(calls) or not all(grad_modes),
        f"{shown} evaluated the function on a tensor that does not require grad, so autograd recorded "
        "nothing to differentiate (switching it on for the output afterwards is too late)"
        "; build the point with requires_grad=True before calling the function",
        "grad-on-by-default",
    )
    expect(
        any(calls),
        f"{shown} evaluated the function inside torch.no_grad(), so autograd recorded nothing to differentiate"
        "; call the function on a leaf that requires grad, outside torch.no_grad()",
    )
    expect_tensor(gradient, shown, shape=(len(values),))
    expect(
        gradient.dtype == torch.float64,
        f"{shown} has dtype {gradient.dtype}: build the point with dtype=torch.float64",
        "numpy-default-dtype",
    )
    expect_close(
        gradient,
        central_difference(function, values),
        f"{shown} does not match the finite-difference gradient"
        ": call backward() on the function's value at a float64 leaf holding the point, and return the leaf's .grad",
        rtol=1e-6,
        atol=1e-8,
    )
    expect_close(
        gradient,
        closed_form(torch.tensor(values, dtype=torch.float64)),
        f"{shown} matches the exact gradient only to float32's digits: the point was built in float32 "
        "somewhere; a cast to float64 afterwards does not bring the lost digits back"
        "; build the point with dtype=torch.float64 from the start",
        "cast-restores-precision",
        rtol=1e-12,
        atol=1e-14,
    )


check_gradient_at("sum of squares", checks.sum_of_squares, [1.0, 2.0, 3.0], lambda t: 2 * t)
check_gradient_at("sum of squares", checks.sum_of_squares, [1.1], lambda t: 2 * t)
print(
    "Checked on the sum of squares at [1.0, 2.0, 3.0] and at [1.1]: one evaluation on a tensor that requires grad, "
    "a float64 gradient [2., 4., 6.] and 2.2 to float64's digits. The grader also tests other functions and points."
)

### BEGIN HIDDEN TESTS
# (name, function, point, closed-form gradient)
cases = [
    ("product of sines", checks.product_of_sines, [0.3, -1.2], sines_gradient),
    ("exp(a) * b**3", checks.exp_of_first_times_cube_of_second, [0.5, 2],
     lambda t: torch.stack([t[0].exp() * t[1] ** 3, 3 * t[0].exp() * t[1] ** 2])),
    ("Euclidean norm", checks.euclidean_norm, [3, 4], lambda t: t / (t @ t).sqrt()),
]
for case in cases:
    check_gradient_at(*case)
### END HIDDEN TESTS

# %% [markdown] md_history
# ## Where this comes from
#
# Automatic differentiation is not finite differences: it carries exact local derivatives
# along with each elementary step of the program instead of perturbing the whole program.
# Early work wrote programs as *Wengert lists*, one elementary assignment per line, and
# reverse-mode accumulation (sweeping such a list backwards) was worked out long before the
# tensor frameworks we use now; Baydin et al.'s survey of AD in machine learning tells that story,
# including Linnainmaa's contribution. The shared mathematics does not mean that PyTorch,
# JAX and TensorFlow implement it the same way.
#
# Next: section 2 looks closely at which tensors are leaves and when `.grad` stays `None`.
