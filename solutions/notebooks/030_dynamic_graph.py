# %% [markdown] intro
# # 3 · Drawing the graph autograd records as the code runs
#
# Autograd's graph is not declared in advance: it is written down while your Python code runs,
# one node per recorded operation, and it is built afresh on every forward pass. In this
# notebook you draw such a graph by hand for a one-parameter regression, check your hand
# derivatives against autograd, and see what happens when the code takes a Python branch.
#
# **How to work.** Run the setup cell first. Replace the `NotImplementedError` lines of each
# answer cell with your code, run the cell, then run the check cell below it. The visible check
# tests what the exercise states on the page's own example; the grader runs hidden tests on other
# inputs and, when a test fails, names the misconception it recognised, such as
# `[misconception: square-rule-factor-dropped]`.

# %% setup
import math

import torch

import functools

import autograd_checks as checks
from autograd_checks import Diagnosis, call_answer, expect, expect_close, seeded, standing_in

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)


def jump_at(t, threshold):
    """t**3 when t > threshold, otherwise 2*t + 7: a Python branch with a jump at the threshold."""
    if t > threshold:
        return t**3
    return 2 * t + 7

# %% [markdown] md_hand_gradients
# ## A graph you can draw
#
# Fit one weight and one bias to a single example: input $x$, target $y$, and
#
# $$\text{pred} = w x + b, \qquad \text{err} = \text{pred} - y, \qquad L = \text{err}^2 .$$
#
# If `w` and `b` require grad and `x`, `y` do not, the forward pass records a small graph. Read
# backwards from the loss: `PowBackward0` (the square) feeds `SubBackward0` (minus the target),
# which feeds `AddBackward0` (plus $b$), which feeds `MulBackward0` (times $x$). The add and
# multiply nodes end in `AccumulateGrad` nodes, one for `b` and one for `w`: that is where the
# gradients are stored. Nothing is recorded for `x` and `y`.
#
# Backward multiplies local derivatives along each path:
#
# * $\partial L / \partial \text{err} = 2\,\text{err}$,
# * $\partial \text{err} / \partial \text{pred} = 1$,
# * $\partial \text{pred} / \partial w = x$ and $\partial \text{pred} / \partial b = 1$,
#
# so $\partial L / \partial w = 2\,\text{err}\cdot 1 \cdot x$ and
# $\partial L / \partial b = 2\,\text{err} \cdot 1 \cdot 1$.
#
# With $x = 2$, $y = 5$, $w = 3$, $b = 1$: pred $= 7$, err $= 2$, the loss is 4, and the
# local derivatives are 4, 1, 2 and 1. Hence $\partial L/\partial w = 8$ and
# $\partial L/\partial b = 4$. Move only the weight to $w = 3.1$ and the same steps give
# err $= 2.2$, the loss 4.84, $\partial L/\partial \text{err} = 4.4$, $\partial L/\partial w = 8.8$
# and $\partial L/\partial b = 4.4$ (the other local derivatives stay 1, 2 and 1).
#
# ### Exercise 1 (3 points)
#
# Write `hand_gradients(x, y, w, b)`: for plain Python numbers, compute the loss and every
# derivative above **by hand** (ordinary arithmetic, no autograd) and return a dict of floats
# with the keys `"loss"`, `"dL_derr"`, `"derr_dpred"`, `"dpred_dw"`, `"dpred_db"`, `"dw"` and
# `"db"`. The grader evaluates it at other numbers than the ones above, and while your function
# runs it refuses every way into autograd: `backward()` (on a tensor or as
# `torch.autograd.backward`), `torch.autograd.grad`, `torch.autograd.functional` (jacobian, vjp,
# jvp, hessian, ...), the transforms of `torch.func` (grad, vjp, jvp, jacrev, jacfwd,
# linearize, ...) and the dual tensors of forward mode (`torch.autograd.forward_ad`). Ordinary
# arithmetic, on Python numbers or on tensors, is all you need.

# %% answer answer_hand_gradients
from solutions.reference.dynamic_graph import hand_gradients

# %% test test_hand_gradients points=3 targets=hard-coded-hand-numbers,square-rule-factor-dropped,autograd-replaces-chain-rule,results-rounded-for-display,numpy-default-dtype
keys = ("loss", "dL_derr", "derr_dpred", "dpred_dw", "dpred_db", "dw", "db")


def by_hand(x, y, w, b):
    """hand_gradients at (x, y, w, b), every way into autograd refused while it runs, as the exercise states."""
    shown = f"hand_gradients(x={x}, y={y}, w={w}, b={b})"
    with (
        checks.blaming_stand_ins(
            f"{shown} ran autograd (backward, torch.autograd.grad or functional, torch.func or forward-mode "
            "dual tensors): multiply the local derivatives yourself with ordinary arithmetic, "
            "so that autograd can check your derivation afterwards",
            "autograd-replaces-chain-rule",
        ),
        checks.refusing_autograd() as refused,
    ):
        found = call_answer(hand_gradients, x, y, w, b)
    refused = checks.refused_autograd_calls(refused, shown)
    expect(
        not refused,
        f"{shown} called {refused[0] if refused else ''} and carried on when it was refused: "
        "a derivation by hand calls no autograd at all"
        "; work each derivative out with the chain rule and ordinary arithmetic",
        "autograd-replaces-chain-rule",
    )
    return found


FLOAT32_ROUNDOFF = 2.0**-24


def expect_no_float32_tensors(found, shown):
    """A value returned as a float32 tensor is named before the demand for Python numbers."""
    single = [key for key in keys if isinstance(found[key], torch.Tensor) and found[key].dtype == torch.float32]
    expect(
        not single,
        f"{shown} returned {', '.join(single)} as float32 tensors: torch.tensor on Python floats makes float32, "
        "which keeps about seven significant digits; compute with the four numbers themselves and return each "
        "value as a Python float",
        "numpy-default-dtype",
    )


def float32_sizes(x, y, w, b):
    """The size of each result's terms, which bounds what float32 arithmetic on them can lose."""
    terms = abs(w * x) + abs(b) + abs(y)  # err = w*x + b - y
    return {"loss": terms**2, "dL_derr": terms, "derr_dpred": 1.0, "dpred_dw": abs(x), "dpred_db": 1.0,
            "dw": terms * abs(x), "db": terms}


def expect_float64_digits(got, exact, point, shown):
    """Name a result that misses float64's digits by no more than float32 arithmetic on the point loses."""
    sizes = float32_sizes(*point)
    for key in keys:
        off = abs(float(got[key]) - exact[key])
        float32_only = off > 1e-9 * abs(exact[key]) + 1e-12 and off <= 64 * FLOAT32_ROUNDOFF * sizes[key]
        expect(
            not float32_only,
            "{}[{!r}] is {}, where float64 arithmetic gives {}: the two agree only to float32's seven digits, which "
            "torch.tensor makes from Python floats; do the arithmetic on the four numbers themselves (or on tensors "
            "built with dtype=torch.float64)".format(shown, key, *checks.apart(got[key], exact[key])),
            "numpy-default-dtype",
        )


found = by_hand(2.0, 5.0, 3.0, 1.0)
expect(isinstance(found, dict), f"hand_gradients should return a dict, got {type(found).__name__}: return a dict")
expect(
    set(found) == set(keys),
    f"hand_gradients should return exactly the keys {keys}, got {tuple(found)}"
    ": return a dict with exactly these keys",
)
expect_no_float32_tensors(found, "hand_gradients(x=2.0, y=5.0, w=3.0, b=1.0)")
expect(
    all(isinstance(found[key], (int, float)) for key in keys),
    "every value returned by hand_gradients should be a Python number, worked out with ordinary arithmetic "
    "on the four numbers it is given (no tensors, no autograd); compute each with +, - and * on the four numbers",
)
page = {"loss": 4.0, "dL_derr": 4.0, "derr_dpred": 1.0, "dpred_dw": 2.0, "dpred_db": 1.0, "dw": 8.0, "db": 4.0}
expect(
    float(found["dL_derr"]) != 2.0,
    "at the page's example (x=2, y=5, w=3, b=1) dL_derr is 2, which is err itself: the derivative of err**2 "
    "is 2*err = 4, and the factor 2 carries through to dw and db; multiply by 2*err on the way to dw and db",
    "square-rule-factor-dropped",
)
for key in keys:
    expect(
        math.isclose(float(found[key]), page[key], rel_tol=1e-12, abs_tol=1e-12),
        "at the page's example (x=2, y=5, w=3, b=1) {!r} is {}, but the page works it out as {}".format(
            key, *checks.apart(found[key], page[key])
        ),
    )
# The page's second point, w = 3.1: the same derivation, other numbers.
found = by_hand(2.0, 5.0, 3.1, 1.0)
expect(
    isinstance(found, dict) and set(found) == set(keys),
    f"hand_gradients should return exactly the keys {keys}"
    ": return a dict with exactly these keys",
)
lesson = {key: page[key] for key in ("loss", "dw", "db")}
expect(
    any(not math.isclose(float(found[key]), lesson[key]) for key in lesson),
    "at the page's second point (x=2, y=5, w=3.1, b=1) hand_gradients still gives loss 4, dw 8 and db 4, the "
    "numbers for w=3: compute them from the arguments",
    "hard-coded-hand-numbers",
)
moved = {"loss": 4.84, "dL_derr": 4.4, "derr_dpred": 1.0, "dpred_dw": 2.0, "dpred_db": 1.0, "dw": 8.8, "db": 4.4}
expect_no_float32_tensors(found, "hand_gradients(x=2.0, y=5.0, w=3.1, b=1.0)")
expect_float64_digits(found, moved, (2.0, 5.0, 3.1, 1.0), "at the page's second point, hand_gradients(x=2, y=5, w=3.1, b=1)")
for key in keys:
    expect(
        math.isclose(float(found[key]), moved[key], rel_tol=1e-9, abs_tol=1e-12),
        "at the page's second point (x=2, y=5, w=3.1, b=1) {!r} is {}, but the page works it out as {}".format(
            key, *checks.apart(found[key], moved[key])
        ),
    )
print(
    "Checked on the page's examples (x=2, y=5, b=1 with w=3 and w=3.1): the seven keys, Python numbers, and the "
    "page's values (loss 4, dw 8, db 4; loss 4.84, dw 8.8, db 4.4), with autograd refused. The grader also tests "
    "other numbers."
)

### BEGIN HIDDEN TESTS
lesson = {"loss": 4.0, "dL_derr": 4.0, "derr_dpred": 1.0, "dpred_dw": 2.0, "dpred_db": 1.0, "dw": 8.0, "db": 4.0}
points = [(1.5, -0.5, 0.25, 2.0), (-3.0, 4.0, -1.25, 0.5), (0.1, 0.3, 0.7, -0.2), (2.0, 5.0, 3.0, 1.0)]
# Numbers with all of float64's digits: an answer that rounds or cuts its results loses some of them.
generator = seeded(31)
points += [tuple((3 * torch.randn(4, dtype=torch.float64, generator=generator)).tolist()) for _ in range(3)]


def digits_lost(value, exact):
    """Whether `value` is `exact` rounded or cut to a few decimals or a few significant digits."""
    shortened = [round(exact, places) for places in range(13)]
    shortened += [math.trunc(exact * 10**places) / 10**places for places in range(13)]
    shortened += [float(f"{exact:.{digits}g}") for digits in range(1, 13)]
    return any(math.isclose(value, short, rel_tol=1e-12, abs_tol=1e-15) for short in shortened)


for x, y, w, b in points:
    shown = f"hand_gradients(x={x}, y={y}, w={w}, b={b})"
    found = by_hand(x, y, w, b)
    expect(
        isinstance(found, dict) and set(found) == set(keys),
        f"{shown} should return a dict with the keys {keys}"
        ": return a dict with exactly these keys",
    )
    expect_no_float32_tensors(found, shown)
    expect(
        all(isinstance(found[key], (int, float)) for key in keys),
        f"every value returned by {shown} should be a Python number"
        "; compute each with +, - and * on the four numbers it is given",
    )
    got = {key: float(found[key]) for key in keys}
    if (x, y, w, b) != (2.0, 5.0, 3.0, 1.0):
        expect(
            any(not math.isclose(got[key], lesson[key]) for key in ("loss", "dw", "db")),
            f"{shown} gives loss 4, dw 8 and db 4, the lesson's numbers for x=2, y=5, w=3, b=1: "
            "compute them from the arguments",
            "hard-coded-hand-numbers",
        )
    err = w * x + b - y
    expect(
        not math.isclose(got["dL_derr"], err, rel_tol=1e-9) and not math.isclose(got["dw"], err * x, rel_tol=1e-9),
        f"{shown} uses err where the derivative of err**2 is 2*err (err = {err:.4g}): "
        "the chain rule keeps the factor 2*err on every path; multiply by 2*err on the way to dw and db",
        "square-rule-factor-dropped",
    )
    # Autograd in float64 gives the loss and the two gradients independently of any hand formula.
    w_t = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    b_t = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    loss = (w_t * x + b_t - y) ** 2
    loss.backward()
    closed_form = {"dL_derr": 2 * err, "derr_dpred": 1.0, "dpred_dw": x, "dpred_db": 1.0}
    reference = {"loss": loss.item(), "dw": w_t.grad.item(), "db": b_t.grad.item(), **closed_form}
    close = {key: math.isclose(got[key], reference[key], rel_tol=1e-9, abs_tol=1e-12) for key in keys}
    for key in keys:
        expect(
            close[key] or not digits_lost(got[key], reference[key]),
            f"{shown}[{key!r}] is {got[key]!r}, which is {reference[key]!r} rounded or cut to a few digits: "
            "return the numbers as you computed them and round only when you print",
            "results-rounded-for-display",
        )
    expect_float64_digits(got, reference, (x, y, w, b), shown)
    for key in keys:
        expect(close[key], "{}[{!r}] is {}, expected {}".format(shown, key, *checks.apart(got[key], reference[key])))
### END HIDDEN TESTS

# %% [markdown] md_agrees_with_autograd
# ## Checking the hand derivation with autograd
#
# A hand derivation is worth checking: build `w` and `b` as float64 leaves that require grad,
# `x` and `y` as plain float64 tensors, compute the loss, call `backward()`, and compare
# `loss.item()`, `w.grad.item()` and `b.grad.item()` with your numbers. Compare all three: a
# derivation can get the loss right and a gradient wrong. And compare in float64: float32
# rounding alone moves the seventh significant digit. At the second point above, float32 stores
# $w = 3.1$ as 3.0999999046325684, and autograd in float32 finds the loss 4.839999198913574 and
# $\partial L/\partial w$ = 8.799999237060547 where float64 gives 4.84 and 8.8.
#
# ### Exercise 2 (3 points)
#
# Write `agrees_with_autograd(hand, x, y, w, b)`: `hand` is a function that works like
# `hand_gradients` (it returns a dict with at least `"loss"`, `"dw"` and `"db"`). Return `True`
# when its three numbers at `(x, y, w, b)` match what autograd computes, and `False` otherwise.
# Count two numbers as equal when `math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)` holds.
# The grader feeds your function both correct and faulty hand derivations.

# %% answer answer_agrees_with_autograd
from solutions.reference.dynamic_graph import agrees_with_autograd

# %% test test_agrees_with_autograd points=3 targets=grad-on-by-default,numpy-default-dtype,checks-loss-not-gradients,isclose-rules-interchangeable
closed_form = checks.square_loss_derivation
verdict = call_answer(agrees_with_autograd, closed_form, 2.0, 5.0, 3.0, 1.0)
checks.expect_python_bool(verdict, "agrees_with_autograd")
expect(
    verdict is True,
    "agrees_with_autograd rejected correct hand derivatives at the page's (x, y, w, b) = (2, 5, 3, 1)"
    ": compare each of loss, dw and db with math.isclose at the stated rel_tol and abs_tol",
)
verdict = call_answer(agrees_with_autograd, closed_form, 2.0, 5.0, 3.1, 1.0)
expect(
    verdict is True,
    "agrees_with_autograd accepts correct derivatives at whole numbers but rejects them at the page's (2, 5, 3.1, 1): "
    "float32 rounding explains that; build the tensors with dtype=torch.float64",
    "numpy-default-dtype",
)
# The page: a derivation can get the loss right and a gradient wrong, so all three are compared.
verdict = call_answer(agrees_with_autograd, functools.partial(checks.square_loss_derivation, factor=1.0), 2.0, 5.0, 3.0, 1.0)
expect(
    verdict is False,
    "agrees_with_autograd accepted a derivation that drops the factor 2 at the page's (2, 5, 3, 1): its loss 4 "
    "matches, but its dw is 4 and its db 2 where autograd finds 8 and 4; dw and db must be compared too"
    "; compare each of loss, dw and db with autograd's",
    "checks-loss-not-gradients",
)
print(
    "Checked at the page's points (2, 5, 3, 1) and (2, 5, 3.1, 1): the right derivation is accepted at both, one "
    "with the right loss and wrong gradients is refused. The grader also tests other points and the stated "
    "tolerances."
)

### BEGIN HIDDEN TESTS
factor_dropped = functools.partial(checks.square_loss_derivation, factor=1.0)
lesson_numbers = checks.lesson_numbers
sign_flipped = functools.partial(checks.square_loss_derivation, db_sign=-1.0)
# Right except for a residue of 5e-13 in db, inside the stated abs_tol where the exact db is 0.
db_off_by_rounding = functools.partial(checks.square_loss_derivation, db_shift=5e-13)
db_off_beyond_abs_tol = functools.partial(checks.square_loss_derivation, db_shift=5e-12)
dw_off_in_ninth_digit = functools.partial(checks.square_loss_derivation, dw_scale=1 + 5e-9)
wrong_loss = functools.partial(checks.square_loss_derivation, absolute_loss=True)


for point in ((2.0, 5.0, 3.0, 1.0), (-1.0, 3.0, 2.0, 4.0)):
    verdict = call_answer(agrees_with_autograd, closed_form, *point)
    expect(
        verdict is True,
        f"agrees_with_autograd rejected correct hand derivatives at (x, y, w, b) = {point}"
        ": compare each of loss, dw and db with math.isclose at the stated rel_tol and abs_tol",
    )
for point in ((0.1, 0.3, 0.7, -0.2), (1.7, -2.3, 0.45, 1.1)):
    verdict = call_answer(agrees_with_autograd, closed_form, *point)
    expect(
        verdict is True,
        f"agrees_with_autograd accepts correct derivatives at whole numbers but rejects them at (x, y, w, b) = {point}: "
        "float32 rounding explains that; build the tensors with dtype=torch.float64",
        "numpy-default-dtype",
    )
verdict = call_answer(agrees_with_autograd, lesson_numbers, 2.0, 5.0, 3.0, 1.0)
expect(
    verdict is True,
    "agrees_with_autograd rejected the lesson's numbers at the lesson's point, where they are right"
    ": compare each of loss, dw and db with math.isclose at the stated rel_tol and abs_tol",
)
# At (2, 7, 3, 1) the error is exactly 0, so autograd's db is 0 and only abs_tol can accept a residue.
verdict = call_answer(agrees_with_autograd, db_off_by_rounding, 2.0, 7.0, 3.0, 1.0)
expect(
    verdict is True,
    "agrees_with_autograd rejected a db of 5e-13 where autograd finds 0: the stated abs_tol=1e-12 accepts it"
    "; use math.isclose with abs_tol=1e-12 for every comparison",
)
faulty = [
    ("a derivation that drops the factor 2 (its loss is right, its gradients are not)", factor_dropped, (1.5, -0.5, 0.25, 2.0)),
    ("the lesson's numbers 4, 8, 4 at another point", lesson_numbers, (-3.0, 4.0, -1.25, 0.5)),
    ("a derivation with the sign of db flipped", sign_flipped, (0.5, 2.0, 1.5, -1.0)),
    ("a derivation with the wrong loss", wrong_loss, (1.0, -2.0, 0.5, 0.25)),
    ("a db of 5e-12 where autograd finds 0 (beyond the stated abs_tol=1e-12)", db_off_beyond_abs_tol, (2.0, 7.0, 3.0, 1.0)),
    ("a dw off by 5e-9 relative (beyond the stated rel_tol=1e-9)", dw_off_in_ninth_digit, (1.5, -0.5, 0.25, 2.0)),
]
for description, hand, point in faulty:
    verdict = call_answer(agrees_with_autograd, hand, *point)
    checks.expect_python_bool(verdict, "agrees_with_autograd")
    derived, found = hand(*point), closed_form(*point)
    loss_right = math.isclose(derived["loss"], found["loss"])
    # Gradients this far off pass only a comparison that leaves them out; a nearer miss is a looser tolerance.
    gradients_far_off = any(abs(derived[key] - found[key]) > 1e-6 * max(1.0, abs(found[key])) for key in ("dw", "db"))
    expect(
        not (verdict and loss_right and gradients_far_off),
        f"agrees_with_autograd accepted {description} at {point}: the loss matches, but dw and db must be compared too"
        "; compare each of loss, dw and db with autograd's",
        "checks-loss-not-gradients",
    )
    expect(
        not verdict,
        f"agrees_with_autograd accepted {description} at {point}"
        ": return False as soon as one of loss, dw or db is not close to autograd's by "
        "math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), the stated rule",
    )


def torch_rule(a, b):
    """torch.isclose(a, b)'s rule: |a - b| <= atol + rtol * |b|, scaled by the second number only."""
    close = torch.isclose(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64), rtol=1e-9, atol=1e-12)
    return bool(close)


def stated_rule(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


# Probes where the two rules part: dw moved just past math.isclose's bound but inside torch.isclose's
# (which adds atol to rtol * |b|), in both directions; and, at points whose derivatives are exact
# integers, dw moved to the first float that math.isclose still accepts but torch.isclose(claimed, found)
# (above) or torch.isclose(found, claimed) (below) rejects.
# (point, claimed dw, how it was moved)
boundary_probes = [
    ((2.0, 5.0, 3.0, 1.0), 8.0 + 8e-9 + 5e-13, "up by rtol * |dw| + atol / 2"),
    ((2.0, 5.0, 3.0, 1.0), 8.0 - 8e-9 - 5e-13, "down by rtol * |dw| + atol / 2"),
    ((3.0, 0.0, 12345819.0, 0.0), 222224742.22222474, "up to where only the larger number's rtol covers it"),
    ((3.0, 0.0, 12345771.0, 0.0), 222223877.77777612, "down to where only the larger number's rtol covers it"),
]
for point, claimed_dw, moved in boundary_probes:
    x, y, w, b = point
    err = w * x + b - y  # exact at these points, so these are autograd's float64 numbers too
    exact = {"loss": err * err, "dw": 2 * err * x, "db": 2 * err}
    expected = stated_rule(claimed_dw, exact["dw"])
    torch_verdicts = {torch_rule(claimed_dw, exact["dw"]), torch_rule(exact["dw"], claimed_dw)}
    expect(
        torch_verdicts != {expected},
        f"the probe dw = {claimed_dw!r} at {point} no longer separates math.isclose's rule from torch.isclose's"
        ": report this to the course staff, since the test itself is out of step",
    )
    hand = functools.partial(checks.stated_numbers, exact["loss"], claimed_dw, exact["db"])
    verdict = call_answer(agrees_with_autograd, hand, *point)
    checks.expect_python_bool(verdict, "agrees_with_autograd")
    gap = abs(claimed_dw - exact["dw"])
    bound = max(1e-9 * max(abs(claimed_dw), abs(exact["dw"])), 1e-12)
    shown = (
        f"a dw of {claimed_dw!r} where autograd finds {exact['dw']!r} at (x, y, w, b) = {point} ({moved}): "
        f"the gap {gap:.17g} is {'within' if expected else 'beyond'} math.isclose's bound "
        f"max(rel_tol * max(|a|, |b|), abs_tol) = {bound:.17g}"
    )
    expect(
        verdict == expected or verdict not in torch_verdicts,
        f"agrees_with_autograd {'rejected' if expected else 'accepted'} {shown}. That is torch.isclose's rule "
        "(atol + rtol * |b|, which adds the tolerances and scales by its second argument only), not the stated "
        "math.isclose rule; use math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)",
        "isclose-rules-interchangeable",
    )
    expect(
        verdict == expected,
        f"agrees_with_autograd {'rejected' if expected else 'accepted'} {shown}"
        ": use math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) on each of loss, dw and db",
    )
### END HIDDEN TESTS

# %% [markdown] md_predicted_branch_gradient
# ## Python control flow and the graph
#
# The graph is rebuilt on every forward pass from the operations that actually ran. If your
# function contains an ordinary Python `if`, only the branch that executed leaves nodes in the
# graph, so autograd differentiates that branch, and only that branch. It knows nothing about
# the branch that did not run, and the comparison in the `if` is not an operation with a
# derivative: a jump in the function at the branch boundary does not show up in the gradient.
#
# The setup cell defines `jump_at(t, threshold)`: it returns `t**3` when `t > threshold` and
# `2*t + 7` otherwise. With threshold 1, the function jumps from 9 to 1 as $t$ crosses 1 from
# below. Try it yourself: make `t` a float64 leaf, call `jump_at(t, 1.0).backward()` and look
# at `t.grad` for $t = 0.5$, $t = 1$ and $t = 1.5$.
#
# ### Exercise 3 (2 points)
#
# Write `predicted_branch_gradient(x, threshold)`: without calling autograd, predict the value
# that autograd stores in `t.grad` after `jump_at(t, threshold).backward()`, where `t` is a
# float64 leaf holding the number `x`. Return it as a float. Reason it out from the branch that
# runs: while your function runs, the grader replaces `jump_at` with a stand-in that refuses to
# be called and refuses every way into autograd (`backward()`, `torch.autograd.grad`,
# `torch.autograd.functional`, `torch.func`'s transforms, forward-mode dual tensors). It runs
# autograd itself on points on both sides of the threshold, and on the threshold itself, and
# compares.

# %% answer answer_predicted_branch_gradient
from solutions.reference.dynamic_graph import predicted_branch_gradient

# %% test test_predicted_branch_gradient points=2 targets=unexecuted-branch-differentiated,branch-condition-differentiated,branch-gradient-unpredictable
def check_branch_prediction(x, threshold):
    """The prediction at (x, threshold), without jump_at or autograd, against what autograd stores."""
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    jump_at(t, threshold).backward()
    ran_upper = x > threshold
    other_branch = 2.0 if ran_upper else 3.0 * x**2
    shown = f"predicted_branch_gradient({x}, {threshold})"
    with (
        checks.blaming_stand_ins(
            f"{shown} ran jump_at or autograd (backward, torch.autograd.grad or functional, torch.func or "
            "forward-mode dual tensors) instead of predicting: decide which branch of jump_at runs at x "
            "and differentiate that branch by hand",
            "branch-gradient-unpredictable",
        ),
        standing_in(predicted_branch_gradient, jump_at=checks.refuse_call),
        checks.refusing_autograd() as refused,
    ):
        guess = call_answer(predicted_branch_gradient, x, threshold)
    refused = checks.refused_autograd_calls(refused, shown)
    expect(
        not refused,
        f"{shown} called {refused[0] if refused else ''} and carried on when it was refused: "
        "predict the gradient from the branch that runs, without autograd"
        "; work it out from which branch runs at that point",
        "branch-gradient-unpredictable",
    )
    expect(
        isinstance(guess, float),
        f"{shown} should return a Python float, as the exercise asks, got {checks.type_name(guess)}"
        ": return the slope as a float (2.0, not 2; float(...) converts a number)",
    )
    branch = "t**3" if ran_upper else "2*t + 7"
    expect(
        not math.isclose(guess, other_branch, rel_tol=1e-9),
        f"{shown} is the derivative of the branch that did not run: at this point jump_at executed {branch}, "
        "and autograd differentiates only the operations that ran; work it out from the branch that runs at that point",
        "unexecuted-branch-differentiated",
    )
    expect(
        x != threshold or (math.isfinite(guess) and math.isclose(guess, t.grad.item(), rel_tol=1e-9)),
        f"{shown} at the threshold itself is {guess}: the if-condition is not differentiated, "
        f"so autograd simply reports the derivative of {branch}, the branch that ran"
        "; return the derivative of the branch that runs at the threshold",
        "branch-condition-differentiated",
    )
    expect(
        math.isclose(guess, t.grad.item(), rel_tol=1e-9, abs_tol=1e-12),
        "{} is {}, but autograd stores {}".format(shown, *checks.apart(guess, t.grad.item())),
    )


for x in (0.5, 1.0, 1.5):  # the page's points, threshold 1
    check_branch_prediction(x, 1.0)
print(
    "Checked at the page's t = 0.5, 1 and 1.5 with threshold 1, with jump_at and autograd refused: the "
    "derivative of the branch that runs. The grader also tests other thresholds and points."
)

### BEGIN HIDDEN TESTS
for x, threshold in ((-0.5, 0.25), (2.0, 0.25), (0.25, 0.25), (-3.0, -2.0), (-1.5, -2.0), (-2.0, -2.0), (1.2, 3.0), (3.0, 3.0), (4.5, 3.0)):
    check_branch_prediction(x, threshold)
### END HIDDEN TESTS

# %% [markdown] md_next
# ## Summary
#
# * The forward pass writes the graph as it runs; backward multiplies the local derivatives
#   along its paths and stores the results in the leaves' `AccumulateGrad` nodes.
# * For $L = (wx + b - y)^2$: $\partial L/\partial w = 2\,\text{err}\,x$ and
#   $\partial L/\partial b = 2\,\text{err}$; at $x=2, y=5, w=3, b=1$ the loss is 4 and the
#   gradients are 8 and 4.
# * Check hand derivations against autograd in float64, comparing gradients and not only the loss.
# * Python control flow picks which operations are recorded. Autograd differentiates the branch
#   that ran, never the other one, and never the branch condition.
#
# Next, in section 4: the MNIST network rewritten with raw tensors.
