# %% [markdown] intro
# # 2.1 · Backward from a vector output: choosing the cotangent
#
# So far every `backward()` started from a single number. Many outputs are vectors or
# matrices. This short notebook shows what `backward()` needs then, and why reducing to a
# scalar is only one of the possible choices.
#
# You will
#
# 1. write a vector-Jacobian product with `backward(v)`,
# 2. work out exactly which outputs `backward()` can seed on its own.
#
# **How to work.** Run the setup cell first. Replace the `NotImplementedError` lines of each
# answer cell with your code, run the cell, then run the check cell below it. The visible check
# tests what the exercise states on the page's own example; the grader runs hidden tests on
# other inputs and, when a test fails, names the misconception it recognised, such as
# `[misconception: sum-replaces-cotangent]`.

# %% setup
import math

import torch

import functools

import autograd_checks as checks
from autograd_checks import call_answer, expect, expect_close, expect_tensor, seeded

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# %% [markdown] md_vjp
# ## backward(v) computes vᵀJ
#
# Let $y = f(x)$ with $x \in \mathbb{R}^n$ and $y \in \mathbb{R}^m$, and let $J$ be the
# $m \times n$ Jacobian of $f$ at $x$. Reverse mode does not build $J$. Starting from a
# vector $v$ with the shape of $y$ (the **cotangent**, or upstream gradient), it pulls $v$
# back through each recorded operation and leaves $v^\top J$, a vector with the shape of
# $x$, in `x.grad`. You supply $v$ with `y.backward(v)`.
#
# When $y$ has more than one element and you call `y.backward()` with no argument, PyTorch
# does not guess a $v$: it raises a `RuntimeError`. Reducing first, as in `y.sum().backward()`,
# is the same as choosing $v = (1, \dots, 1)$, and `y.mean().backward()` chooses
# $v = (1/m, \dots, 1/m)$. Those are legitimate choices when that is the quantity you want,
# but not when you were handed a specific $v$.
#
# Example: for $x = (2, 3)$ in float64 and $y = x \odot x$ (elementwise), $J$ is diagonal with
# entries $2x_i = (4, 6)$. With $v = (4, 5)$, `y.backward(v)` stores
# $(4 \cdot 4, 5 \cdot 6) = (16, 30)$ in `x.grad`.
#
# ### Exercise 1 (3 points)
#
# Write `vjp(f, x, v)`: `x` is a float64 tensor that does not require grad, `f` maps a tensor
# to a tensor, and `v` has the shape of `f(x)`. Return $v^\top J$ at `x` as a tensor with the
# shape of `x`, pulling `v` back in reverse mode (with `backward(v)`, or any call that passes a
# cotangent the same way). Do not build the Jacobian: the grader gives your function
# an input large enough that a dense Jacobian would dwarf every tensor `backward(v)` needs, and
# stops it when it makes one. It compares your results with closed-form products on several
# functions and random cotangents.

# %% answer answer_vjp
from solutions.reference.cotangents import vjp

# %% test test_vjp points=3 targets=vector-backward-without-cotangent,sum-replaces-cotangent,dense-jacobian-for-vjp,changes-a-handed-input
# Here the way forward from a bare backward() is the cotangent vjp was given, never a reduction
# (reducing is the next mistake this check looks for).
VJP_ERRORS = (
    (
        "scalar outputs",
        "vector-backward-without-cotangent",
        "backward() was called with no argument on an output with more than one element: pass it the "
        "cotangent vjp was given, as y.backward(v), so that x.grad holds vᵀJ",
    ),
) + checks.COMMON_ERRORS
result = call_answer(
    vjp,
    checks.squared,
    torch.tensor([2.0, 3.0], dtype=torch.float64),
    torch.tensor([4.0, 5.0], dtype=torch.float64),
    known_errors=VJP_ERRORS,
)
shown = "vjp(square, x, v) for the page's x = (2, 3) and v = (4, 5)"
expect_tensor(result, shown, shape=(2,))
expect(
    result.tolist() != [4.0, 6.0],
    f"{shown} is (4, 6), the gradient of f(x).sum(), which is 1ᵀJ: pass the given cotangent v to backward(v) "
    "instead of reducing the output",
    "sum-replaces-cotangent",
)
expect_close(
    result,
    torch.tensor([16.0, 30.0], dtype=torch.float64),
    f"{shown} is not the page's (16, 30)"
    ": call y.backward(v) on y = f(x) for a leaf x and return x.grad",
    rtol=1e-12,
    atol=0,
)
print(
    "Checked on the page's example (x = (2, 3), v = (4, 5), f squares): the shape of x and the value (16, 30). "
    "The grader also tests other functions and cotangents, and an input too large for a Jacobian."
)

### BEGIN HIDDEN TESTS
gen = seeded(40)
A = torch.randn(3, 5, dtype=torch.float64, generator=gen)
# Square, so that a pullback of ones times v has the right shape but not vᵀJ's values.
square = torch.randn(4, 4, dtype=torch.float64, generator=seeded(41))


def stacked_pullback(t, v):
    first = v[0] * t.cos()
    second = v[1] * torch.stack([t[1], t[0], torch.zeros((), dtype=torch.float64)])
    third = v[2] * torch.stack([torch.zeros((), dtype=torch.float64), torch.zeros((), dtype=torch.float64), t[2].exp()])
    return first + second + third


# (name, f, shape of x, closed-form pullback v -> vᵀJ at x)
cases = [
    ("t * t", checks.squared, (4,), lambda t, v: 2 * t * v),
    ("S @ t with S of shape (4, 4)", functools.partial(checks.matrix_times, square), (4,), lambda t, v: square.T @ v),
    ("A @ t with A of shape (3, 5)", functools.partial(checks.matrix_times, A), (5,), lambda t, v: A.T @ v),
    ("stack([sin(t).sum(), t[0] * t[1], exp(t[2])])", checks.sines_product_exp, (3,), stacked_pullback),
    ("t @ t.T for t of shape (2, 3)", checks.gram, (2, 3), lambda t, v: (v + v.T) @ t),
    # Elementwise with a running sum: backward(v) needs tensors of 600 entries, the Jacobian has 360000.
    ("sin(t) * cumsum(t) for t of shape (600,)", checks.sine_times_running_sum, (600,),
     lambda t, v: t.cos() * t.cumsum(0) * v + (t.sin() * v).flip(0).cumsum(0).flip(0)),
]
for name, f, shape, pullback in cases:
    x = torch.randn(shape, dtype=torch.float64, generator=gen)
    with torch.no_grad():
        output_shape = f(x).shape
    v = torch.randn(output_shape, dtype=torch.float64, generator=gen)
    expected = pullback(x, v)
    summed = pullback(x, torch.ones_like(v))
    shown = f"vjp({name}, x, v)"
    budget = 8 * max(x.numel(), v.numel(), 16)
    result, watched = checks.call_watched(vjp, f, x.clone(), v.clone(), limit=budget, known_errors=VJP_ERRORS)
    checks.expect_within(
        watched,
        f"{shown} made a tensor of more than {budget} entries, while the Jacobian of this f has "
        f"{v.numel()} x {x.numel()} entries: backward(v) gives vᵀJ without building J"
        "; call backward(v) on f(x) and return the leaf's .grad instead of building J",
        "dense-jacobian-for-vjp",
    )
    # A Jacobian, or a product with it that kept its axes, ends in the shape of x with more axes before.
    expect(
        not (isinstance(result, torch.Tensor) and result.dim() > len(shape) and tuple(result.shape[-len(shape):]) == shape),
        f"{shown} has shape {tuple(getattr(result, 'shape', ()))}, the shape of a Jacobian (f(x)'s {tuple(output_shape)} "
        f"then x's {shape}) or of a product that kept its axes: vᵀJ has the shape of x; pass v to backward(v) "
        "and return x.grad instead of building J",
        "dense-jacobian-for-vjp",
    )
    expect_tensor(result, shown, shape=shape)
    # A pullback of ones (a sum), returned as it is or multiplied by v afterwards.
    sum_routes = [summed]
    if v.shape == summed.shape and not torch.allclose(summed * v, expected, rtol=1e-9, atol=1e-12):
        sum_routes.append(summed * v)  # for an elementwise f this product is vᵀJ itself
    close_to_sum = any(
        torch.allclose(result.detach().to(torch.float64), route, rtol=1e-9, atol=1e-12) for route in sum_routes
    )
    expect(
        not close_to_sum,
        f"{shown} equals the gradient of f(x).sum(), which is 1ᵀJ (or that times v, which is vᵀJ only for "
        "elementwise maps): pass the given cotangent v to backward(v) instead of a cotangent of ones",
        "sum-replaces-cotangent",
    )
    expect_close(
        result,
        expected,
        f"{shown} is not vᵀJ (compared with the closed-form product)"
        ": call backward(v) on f(x) with the given v and return the leaf's .grad",
        rtol=1e-9,
        atol=1e-12,
    )
### END HIDDEN TESTS

# %% [markdown] md_implicit_seed
# ## When may backward() have no argument?
#
# `backward()` with no argument is a shorthand for `backward(torch.ones_like(y))`, and PyTorch
# allows it only when the output is a real tensor with exactly **one element**. The shape does
# not need to be `()`: an output of shape `(1,)` or `(1, 1)` holds one number too. For example
# `q = torch.tensor([2.], requires_grad=True)` and `(q * q).backward()` give `q.grad` equal to
# `[4.]`. An output of shape `(2,)` has two elements, so it needs an explicit cotangent.
#
# ### Exercise 2 (2 points)
#
# Write `implicit_seed_allowed(shape)`: return `True` if calling `backward()` with no argument
# works on a real float64 output of the given `shape`, and `False` otherwise. A size in `shape`
# may be 0: an output with no elements at all has no single number to seed either, so
# `backward()` without an argument refuses it as well. How you decide is up to you.

# %% answer answer_implicit_seed_allowed
from solutions.reference.cotangents import implicit_seed_allowed

# %% test test_implicit_seed_allowed points=2 targets=vector-backward-without-cotangent,scalar-means-zero-dim
def check_implicit_seed(shape):
    """The page's rule for one shape: backward() without a cotangent needs exactly one element."""
    answer = call_answer(implicit_seed_allowed, shape)
    shown = f"implicit_seed_allowed({shape})"
    checks.expect_python_bool(answer, shown)
    expected = math.prod(shape) == 1
    expect(
        answer or not expected or len(shape) == 0,
        f"{shown} is False, but an output of shape {shape} holds exactly one element, "
        "and backward() seeds any real one-element output, not only shape (); return True for any one-element output",
        "scalar-means-zero-dim",
    )
    expect(
        expected or not answer,
        f"{shown} is True, but an output of shape {shape} has {math.prod(shape)} element(s): "
        "backward() without a cotangent needs exactly one; return True only for an output with exactly one element",
        "vector-backward-without-cotangent",
    )
    expect(answer == expected, f"{shown} should be {expected}: decide from the number of elements the shape holds (the product of its sizes)")


for shape in ((), (1,), (1, 1), (2,), (0,)):  # the shapes the page names
    check_implicit_seed(shape)
print(
    "Checked on the shapes the page names: (), (1,) and (1, 1) allow it, (2,) and (0,) do not. "
    "The grader also tests other shapes."
)

### BEGIN HIDDEN TESTS
for shape in ((3, 2), (1, 1, 1), (4, 1), (1, 5), (2, 0), (1, 0, 1)):
    check_implicit_seed(shape)
### END HIDDEN TESTS

# %% [markdown] md_next
# ## Summary
#
# * `y.backward(v)` computes $v^\top J$ without building $J$; $v$ has the shape of `y`
#   and the result has the shape of `x`.
# * `sum()` and `mean()` are particular choices of $v$, not a requirement.
# * `backward()` with no argument works on any real output with one element, whatever its
#   number of dimensions, and raises for more (or fewer) elements.
#
# Next, in section 3: the graph that autograd records, drawn by hand.
