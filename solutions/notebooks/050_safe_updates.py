# %% [markdown] safe_updates_intro
# # 5 · Updating parameters safely and resetting their gradients
#
# Section 4 ended with every parameter holding a `.grad`. Turning those gradients into a
# training step raises three practical questions, one per exercise:
#
# 1. How do you change a parameter without autograd recording (or refusing) the change?
# 2. What should happen to `.grad` after a step, and does `None` differ from zeros?
# 3. How do you get the gradient of a large batch from several smaller backward passes?
#
# **How to work.** Run the setup cell first. Replace the `NotImplementedError` lines of each
# answer cell with your code, run it, then run the check cell below it. The visible check
# tests what the exercise states on the page's own example; the grader runs further tests on
# other inputs and names the misconception it recognised when a test fails, like
# `[misconception: backward-overwrites-grad]`.

# %% safe_updates_setup
import torch
import torch.nn.functional as F

import functools

import autograd_checks as checks
from autograd_checks import COMMON_ERRORS, call_answer, expect, expect_close, in_kernel, may_change_in_place, seeded

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# %% [markdown] md_sgd_step
# ## 5.1 A step that autograd neither records nor refuses
#
# Plain gradient descent moves each parameter against its gradient: $p \leftarrow p - \eta\, \nabla_p L$.
# Written naively, this step goes wrong in one of two ways.
#
# * **In place, in grad mode.** `p -= lr * p.grad` on a leaf that requires grad raises a
#   `RuntimeError` (PyTorch refuses an in-place change of such a leaf while it is recording)
#   instead of quietly extending the graph with every step.
# * **Out of place.** `p = p - lr * p.grad` runs without complaint, but it builds a *new*
#   tensor: a non-leaf with a `grad_fn`. Inside a `for p in params` loop it only rebinds the
#   loop variable, so the caller's parameters never change. (Differentiating through an
#   update on purpose is a different, deliberate algorithm, not ordinary SGD.)
#
# A correct step avoids both failures: the caller's parameters must end up with the new
# values, as the same leaves, with no trace of the update in any graph. It also has to leave
# the gradients empty, because `backward()` **adds** into `.grad`: without a reset, the next
# step would use the sum of old and new gradients.
#
# Writing through `p.data` is not the way out either: a change made through `.data` is
# invisible to autograd's version counter, the bookkeeping that detects a saved value being
# overwritten.
#
# ### Exercise 1 (3 points)
#
# Write `sgd_step(params, lr)`. Every tensor in `params` is a leaf that requires grad and
# already holds a `.grad`. Move each one to `p - lr * p.grad` and leave its `.grad` as
# `None`; return nothing. Afterwards the caller's own tensors must hold the new values (the
# same objects in the same storage, still leaves that require grad), and each one's version
# counter must show the change. Decide how to make the update so that autograd neither
# records it nor refuses it.

# %% answer answer_sgd_step
from solutions.reference.safe_updates import sgd_step

# %% test test_sgd_step points=3 targets=inplace-leaf-in-grad-mode,rebinding-updates-parameter,backward-overwrites-grad,zero-fill-same-as-none,data-attribute-is-safe
# Errors PyTorch raises for an update in grad mode, worded for you.
UPDATE_ERRORS = COMMON_ERRORS + (
    ("a leaf Variable", "inplace-leaf-in-grad-mode",
     "a parameter was changed in place while autograd was recording; do the update inside torch.no_grad()"),
    ("in-place operation", "inplace-leaf-in-grad-mode",
     "a parameter was changed in place while autograd was recording; do the update inside torch.no_grad()"),
)


def check_sgd_step(seed, lr, shapes):
    """Seeded float64 leaves with gradients: after sgd_step, the same leaves moved in place, seen, with .grad None."""
    generator = seeded(seed)
    params = [torch.randn(*shape, generator=generator, dtype=torch.float64).requires_grad_() for shape in shapes]
    may_change_in_place(*params)  # the expected values below come from copies made before the call
    weights = [torch.randn(*shape, generator=generator, dtype=torch.float64) for shape in shapes]
    loss = sum((torch.sin(p) * w).sum() + (p * p).sum() for p, w in zip(params, weights))
    loss.backward()
    originals = list(params)
    pointers = [p.data_ptr() for p in params]
    versions = [p._version for p in params]
    starts = [p.detach().clone() for p in params]
    gradients = [p.grad.detach().clone() for p in params]
    call_answer(sgd_step, params, lr, known_errors=UPDATE_ERRORS)
    expect(
        len(params) == len(originals) and all(p is q for p, q in zip(params, originals)),
        "sgd_step put new tensors into the caller's list: params[i] - lr * grad is a new non-leaf tensor; "
        "change the existing parameters in place under torch.no_grad()",
        "rebinding-updates-parameter",
    )
    for index, (p, pointer, version, start, gradient) in enumerate(zip(params, pointers, versions, starts, gradients)):
        name = f"params[{index}]"
        expect(
            p.is_leaf and p.grad_fn is None and p.requires_grad,
            f"after sgd_step(params, lr={lr}), {name} should still be a leaf that requires grad"
            ": update each parameter in place (p -= lr * p.grad) under torch.no_grad()",
        )
        expect(
            p.data_ptr() == pointer,
            f"after sgd_step(params, lr={lr}), {name} lives in new storage: assigning p.data = ... swaps the "
            "values behind autograd's back; update p itself in place (p -= lr * p.grad) inside torch.no_grad()",
            "data-attribute-is-safe",
        )
        expect(
            not torch.equal(p.detach(), start),
            f"after sgd_step(params, lr={lr}), {name} still holds its old values: p = p - lr * p.grad only rebinds the loop "
            "variable to a new non-leaf tensor, so the caller's parameter never changes; "
            "update it in place (p -= lr * p.grad) inside torch.no_grad()",
            "rebinding-updates-parameter",
        )
        expect(
            p._version > version,
            f"after sgd_step(params, lr={lr}), {name} changed behind autograd's back: writing through p.data skips the version counter that "
            "protects saved values; update p itself in place inside torch.no_grad()",
            "data-attribute-is-safe",
        )
        expect_close(
            p,
            start - lr * gradient,
            f"after sgd_step(params, lr={lr}), {name} is not p - lr * p.grad"
            ": update each parameter in place by lr times its own .grad, under torch.no_grad()",
            rtol=1e-12,
            atol=1e-14,
        )
        if p.grad is not None:
            expect(
                torch.count_nonzero(p.grad).item() != 0,
                f"after sgd_step(params, lr={lr}), {name}.grad is a tensor of zeros; this step resets gradients to None (p.grad = None)"
                "; set p.grad = None after the update",
                "zero-fill-same-as-none",
            )
            expect(
                False,
                f"after sgd_step(params, lr={lr}), {name}.grad still holds the gradient of this step: backward() adds into .grad, "
                "so the next step would use old plus new gradients; set p.grad = None after the update",
                "backward-overwrites-grad",
            )


check_sgd_step(0, 0.1, ((3, 2), (2,)))
print(
    "Checked on a weight of shape (3, 2) and a bias with lr = 0.1: the same leaves in the same storage, "
    "p - lr * p.grad, the version counter moved, .grad None. The grader also tests other shapes and rates."
)

### BEGIN HIDDEN TESTS
for seed, lr, shapes in ((3, 0.05, ((4, 3), (3,), (3, 2), (2,))), (4, 0.5, ((5,),))):
    check_sgd_step(seed, lr, shapes)
### END HIDDEN TESTS

# %% [markdown] md_optimizer_round
# ## Resetting: `None` is not the same as zero
#
# `torch.optim` optimizers follow the same pattern: `loss.backward()`, `optimizer.step()`,
# then `optimizer.zero_grad()` before the next independent step. `zero_grad` takes a flag:
#
# * `set_to_none=True` (the default in PyTorch 2) sets every `.grad` back to `None`;
# * `set_to_none=False` keeps the gradient tensors and fills them with zeros.
#
# The two differ as soon as a parameter receives **no** gradient in the next step, for
# example a branch of the model that did not run. During `step()` an optimizer skips every
# parameter whose `.grad` is `None`: its value stays put and its state (momentum buffer,
# Adam's moment estimates and step count) is not touched. A zero-filled gradient is an
# ordinary gradient that happens to be zero: the optimizer processes the parameter, with
# momentum it keeps moving it along the old direction, and it updates its state. A
# parameter that never had a gradient gets no optimizer state at all.
#
# ### Exercise 2 (3 points)
#
# Write `optimizer_round(optimizer, loss, set_to_none)`: backpropagate `loss`, take one
# optimizer step, then reset the gradients of the optimizer's parameters the way
# `optimizer.zero_grad(set_to_none=set_to_none)` does: an existing gradient becomes `None`
# (when `set_to_none` is True) or all zeros of the parameter's shape and dtype (when it is
# False; zeroing the old gradient tensor or putting a new zero tensor in its place both
# count), and a parameter that never had a gradient keeps `None`. Return a list with one
# bool per parameter, in the order of `optimizer.param_groups`: True when that parameter had
# a gradient (an all-zero one counts) when the step ran, that is, when the step processed it.
# The grader runs two rounds with SGD with momentum and with Adam, where the second loss
# leaves a parameter out, and inspects values, gradients and optimizer state.

# %% answer answer_optimizer_round
from solutions.reference.safe_updates import optimizer_round

# %% test test_optimizer_round points=3 targets=zero-fill-same-as-none,backward-overwrites-grad
def expect_reset(params, set_to_none, when):
    for name, p in params.items():
        if set_to_none and p.grad is not None:
            expect(
                torch.count_nonzero(p.grad).item() != 0,
                f"{when}, {name}.grad is a tensor of zeros, but set_to_none=True asks for None; "
                "the optimizer would still process a zero gradient"
                "; call optimizer.zero_grad(set_to_none=set_to_none) after the step",
                "zero-fill-same-as-none",
            )
            expect(
                False,
                f"{when}, {name}.grad still holds a gradient: nothing reset it, so the next backward() adds onto it"
                "; call optimizer.zero_grad(set_to_none=set_to_none) after the step",
                "backward-overwrites-grad",
            )
        if not set_to_none:
            expect(
                p.grad is not None,
                f"{when}, {name}.grad is None, but set_to_none=False asks for a zero-filled gradient; "
                "the optimizer skips a None gradient and processes a zero one"
                "; call optimizer.zero_grad(set_to_none=set_to_none) after the step",
                "zero-fill-same-as-none",
            )
            expect(
                isinstance(p.grad, torch.Tensor) and p.grad.shape == p.shape and p.grad.dtype == p.dtype,
                f"{when}, {name}.grad should be zeros of {name}'s shape {tuple(p.shape)} and dtype {p.dtype}"
                ": call optimizer.zero_grad(set_to_none=set_to_none) after the step",
            )
            expect(
                torch.count_nonzero(p.grad).item() == 0,
                f"{when}, {name}.grad still holds a gradient: nothing reset it, so the next backward() adds onto it"
                "; call optimizer.zero_grad(set_to_none=set_to_none) after the step",
                "backward-overwrites-grad",
            )


def sgd_momentum_rounds(set_to_none, seed, lr=0.1, momentum=0.9):
    generator = seeded(seed)
    a0, b0, c, target = (torch.randn(n, generator=generator, dtype=torch.float64) for n in (3, 2, 2, 3))
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    may_change_in_place(a, b)  # expected values come from a0, b0 and c, which stay read-only
    optimizer = in_kernel(torch.optim.SGD, [a, b], lr=lr, momentum=momentum)
    when = f"with SGD(momentum={momentum}) and set_to_none={set_to_none}"
    loss = in_kernel(checks.squares_plus_weighted_sum, a, b, c)
    report = call_answer(optimizer_round, optimizer, loss, set_to_none)
    expect(
        isinstance(report, list) and len(report) == 2 and all(isinstance(flag, bool) for flag in report),
        f"{when}, optimizer_round should return a list of two bools (one per parameter), got {report!r}"
        ": return [p.grad is not None for p in ...] over optimizer.param_groups, read after backward() and before the reset",
    )
    expect(
        report == [True, True],
        f"{when}, the first loss used a and b, so the report is [True, True], not {report}"
        ": read each parameter's .grad after backward() and before the reset",
    )
    buffer_a, buffer_b = 2 * a0, c.clone()
    a1, b1 = a0 - lr * buffer_a, b0 - lr * buffer_b
    expect_close(
        a,
        a1,
        f"{when}, a after the first round is not a - lr * gradient"
        ": call loss.backward(), then optimizer.step(), once each",
        rtol=1e-12,
        atol=1e-14,
    )
    expect_close(
        b,
        b1,
        f"{when}, b after the first round is not b - lr * gradient"
        ": call loss.backward(), then optimizer.step(), once each",
        rtol=1e-12,
        atol=1e-14,
    )
    expect_reset({"a": a, "b": b}, set_to_none, f"{when}, after the first round")
    loss = in_kernel(checks.squared_distance, a, target)
    report = call_answer(optimizer_round, optimizer, loss, set_to_none)
    buffer_a = momentum * buffer_a + 2 * (a1 - target)
    expect_close(
        a,
        a1 - lr * buffer_a,
        f"{when}, a after the second round is not the momentum update"
        ": call loss.backward(), optimizer.step() and the reset once per round",
        rtol=1e-12,
        atol=1e-14,
    )
    if set_to_none:
        expected_report, b2, buffer_b2 = [True, False], b1, buffer_b
    else:
        expected_report, b2, buffer_b2 = [True, True], b1 - lr * momentum * buffer_b, momentum * buffer_b
    why = (
        "the second loss used only a, and b's gradient was None" if set_to_none
        else "the second loss used only a, but b still held the zero-filled gradient from round 1, so the step processed it"
    )
    expect(
        set_to_none or report != [True, False],
        f"{when}, {why}: the report is {expected_report}, not {report}; a zero-filled gradient is "
        "not None, so report p.grad is not None, whatever the gradient holds",
        "zero-fill-same-as-none",
    )
    expect(
        report == expected_report,
        f"{when}, {why}: the report is {expected_report}, not {report}"
        ": read each parameter's .grad after backward() and before the step's reset",
    )
    expect_close(
        b,
        b2,
        f"{when}, b after the second round (which gave it no gradient) is wrong"
        ": call optimizer.step() once per round and reset with the set_to_none you were given",
        rtol=1e-12,
        atol=1e-14,
    )
    expect_close(optimizer.state[b]["momentum_buffer"], buffer_b2,
                 f"{when}, b's momentum buffer after the second round is wrong"
                 ": call optimizer.step() once per round and reset with the set_to_none you were given", rtol=1e-12, atol=1e-14)
    expect_reset({"a": a, "b": b}, set_to_none, f"{when}, after the second round")


# The page's two rounds with SGD and momentum, where the second loss leaves b out, for both flags.
for set_to_none in (True, False):
    sgd_momentum_rounds(set_to_none, seed=0)
print(
    "Checked two rounds of SGD with momentum, the second leaving b out, with set_to_none True and False: the "
    "report, values, resets and b's momentum buffer. The grader also tests Adam and other numbers."
)

### BEGIN HIDDEN TESTS
def adam_rounds(set_to_none, seed):
    generator = seeded(seed)
    a0, b0, c0, target = (torch.randn(n, generator=generator, dtype=torch.float64) for n in (2, 3, 2, 2))
    a, b, c = (t.clone().requires_grad_() for t in (a0, b0, c0))
    may_change_in_place(a, b, c)
    optimizer = in_kernel(torch.optim.Adam, [a, b, c], lr=0.01)
    when = f"with Adam and set_to_none={set_to_none}"
    loss = in_kernel(checks.squares_plus_cubes, a, b)
    report = call_answer(optimizer_round, optimizer, loss, set_to_none)
    expect(report == [True, True, False],
           f"{when}, the first loss used a and b but not c, so the report is [True, True, False], not {report}"
           ": read each parameter's .grad after backward() and before the reset")
    expect_reset({"a": a, "b": b}, set_to_none, f"{when}, after the first round")
    expect(
        c.grad is None or torch.count_nonzero(c.grad).item() != 0,
        f"{when}, after the first round c.grad is a tensor of zeros, but c never received a gradient: "
        "zero_grad leaves a missing gradient as None whatever set_to_none says, and the optimizer would "
        "process those zeros; use optimizer.zero_grad(set_to_none=set_to_none) for the reset",
        "zero-fill-same-as-none",
    )
    expect(
        c.grad is None,
        f"{when}, after the first round c.grad is not None, but c never received a gradient: "
        "zero_grad leaves a missing gradient as None whatever set_to_none says"
        "; use optimizer.zero_grad(set_to_none=set_to_none) for the reset",
    )
    b1 = b.detach().clone()
    loss = in_kernel(checks.squared_distance, a, target)
    report = call_answer(optimizer_round, optimizer, loss, set_to_none)
    expected_report = [True, False, False] if set_to_none else [True, True, False]
    why = (
        "the second loss used only a; b's gradient was None and c never had one" if set_to_none
        else "the second loss used only a, but b still held the zero-filled gradient from round 1, so the step "
        "processed it; c never had a gradient"
    )
    expect(
        set_to_none or report != [True, False],
        f"{when}, {why}: the report is {expected_report}, not {report}; a zero-filled gradient is "
        "not None, so report p.grad is not None, whatever the gradient holds",
        "zero-fill-same-as-none",
    )
    expect(
        report == expected_report,
        f"{when}, {why}: the report is {expected_report}, not {report}"
        ": read each parameter's .grad after backward() and before the step's reset",
    )
    steps_b = float(optimizer.state[b]["step"])
    if set_to_none:
        expect(
            steps_b == 1,
            f"{when}, Adam counted {steps_b:g} steps for b; a None gradient is skipped, so 1"
            "; reset with optimizer.zero_grad(set_to_none=set_to_none)",
        )
        expect(
            torch.equal(b.detach(), b1),
            f"{when}, b moved in the second round although its gradient was None"
            "; reset with optimizer.zero_grad(set_to_none=set_to_none)",
        )
    else:
        expect(
            steps_b == 2,
            f"{when}, Adam counted {steps_b:g} steps for b; a zero gradient is still a step, so 2"
            "; reset with optimizer.zero_grad(set_to_none=set_to_none)",
        )
        expect(not torch.equal(b.detach(), b1),
               f"{when}, b should keep moving on Adam's first-moment estimate with a zero gradient"
               "; reset with optimizer.zero_grad(set_to_none=set_to_none)")
    expect(c.grad is None and len(optimizer.state.get(c, {})) == 0 and torch.equal(c.detach(), c0),
           f"{when}, c never received a gradient: it keeps its value, .grad None and no optimizer state"
           "; leave parameters the loss does not use to the optimizer")
    expect_reset({"a": a, "b": b}, set_to_none, f"{when}, after the second round")


for set_to_none in (True, False):
    sgd_momentum_rounds(set_to_none, seed=41)
    adam_rounds(set_to_none, seed=42)
### END HIDDEN TESTS

# %% [markdown] md_accumulate_grads
# ## 5.2 Gradients from several microbatches, all at the same parameter values
#
# Because `backward()` adds into `.grad`, you can compute the gradient of a batch too large
# for memory in pieces: run forward and backward on each microbatch and let the gradients
# add up. The sum is only the gradient you want under two conditions.
#
# * **Weight by sample counts.** With the default mean reduction, each microbatch loss is a
#   mean over its own $n_j$ samples. The mean over all $N = \sum_j n_j$ samples is
#   $\sum_j \frac{n_j}{N} L_j$, so scale each microbatch loss by $n_j / N$ before its
#   `backward()`. With $m$ pieces of equal size this is simply division by $m$; plain
#   averaging of unequal pieces over-weights the small ones, and skipping the division
#   entirely gives roughly $m$ times the gradient.
# * **One parameter point.** Every term must be a gradient at the *current* parameter values.
#   A gradient left in `.grad` from before the last update belongs to the old point; added to
#   the new ones, it does not form the gradient of any larger batch. Reset first.
#
# ### Exercise 3 (4 points)
#
# Write `accumulate_grads(params, loss_fn, batches)`. `batches` is a list of `(X, y)`
# microbatches of possibly different sizes, and `loss_fn(X, y)` returns the mean loss over
# the rows of `X` at the current values of `params`. When your function returns, each
# parameter's `.grad` must hold the gradient of the mean loss over all samples of all
# microbatches, whatever `.grad` held before the call; a parameter that `loss_fn` does not use
# ends with `.grad` set to `None`, just as after one `backward()` of the full-batch loss on
# cleared gradients. Call `loss_fn` once per microbatch and
# `backward()` once per microbatch, so that only one microbatch's graph exists at a time; return
# nothing. The grader counts both, and compares the result with the full-batch gradient
# computed directly.

# %% answer answer_accumulate_grads
from solutions.reference.safe_updates import accumulate_grads

# %% test test_accumulate_grads points=4 targets=equal-weight-microbatch-means,accumulated-grad-unscaled,stale-grad-after-update,microbatches-merged-into-one,zero-fill-same-as-none
def mean_cross_entropy_grads(X, y, W, b):
    """Closed-form gradient of the mean cross entropy of X @ W + b with respect to W and b (no autograd)."""
    z = X @ W + b
    shifted = (z - z.max(dim=1, keepdim=True).values).exp()
    dz = shifted / shifted.sum(dim=1, keepdim=True)
    dz[torch.arange(len(y)), y] -= 1.0
    dz /= len(y)
    return X.T @ dz, dz.sum(0)


def matches(actual, expected):
    return torch.allclose(actual, expected, rtol=1e-9, atol=1e-12)


def check_accumulate_grads(sizes, seed):
    """Microbatches of `sizes` after an earlier step moved W and b: the full-batch gradient, one pass per piece."""
    generator = seeded(seed)
    total = sum(sizes)
    X = torch.randn(total, 4, generator=generator, dtype=torch.float64)
    y = torch.randint(0, 3, (total,), generator=generator)
    W = torch.randn(4, 3, generator=generator, dtype=torch.float64).requires_grad_()
    b = torch.randn(3, generator=generator, dtype=torch.float64).requires_grad_()
    # A parameter loss_fn never uses, holding a gradient from before the call.
    unused = torch.randn(2, generator=generator, dtype=torch.float64).requires_grad_()
    unused.grad = torch.randn(2, generator=generator, dtype=torch.float64)

    rows_seen = []
    loss_fn = functools.partial(checks.noting_batch_rows, rows_seen, functools.partial(checks.linear_cross_entropy, W, b))

    # An earlier step: its gradients are still in .grad when the parameters move.
    F.cross_entropy(X @ W + b, y).backward()
    with torch.no_grad():
        W -= 0.3 * W.grad
        b -= 0.3 * b.grad
    stale = (W.grad.clone(), b.grad.clone())
    pieces = list(zip(X.split(sizes), y.split(sizes)))
    rows_seen.clear()
    arrivals = {"W": 0, "b": 0}
    hooks = in_kernel(checks.counting_gradient_arrivals, {"W": W, "b": b}, arrivals)
    try:
        call_answer(accumulate_grads, [W, unused, b], loss_fn, pieces)
    finally:
        for hook in hooks:
            hook.remove()
    shown = f"accumulate_grads with microbatches of sizes {list(sizes)}"
    arrivals = checks.arrival_counts(arrivals, shown)
    full = mean_cross_entropy_grads(X, y, W.detach(), b.detach())
    per_piece = [mean_cross_entropy_grads(Xb, yb, W.detach(), b.detach()) for Xb, yb in pieces]
    summed = [sum(g[i] for g in per_piece) for i in range(2)]
    shown = f"accumulate_grads with microbatches of sizes {list(sizes)}"
    expect(
        all(rows in sizes for rows in rows_seen),
        f"{shown} called loss_fn on batches of {rows_seen} rows: call it on each microbatch as given, "
        "not on the microbatches joined together",
        "microbatches-merged-into-one",
    )
    expect(
        sorted(rows_seen) == sorted(sizes),
        f"{shown} called loss_fn on batches of {rows_seen} rows: call it exactly once on each microbatch",
    )
    for name, count in arrivals.items():
        expect(
            count == len(pieces),
            f"{shown} ran {count} backward pass(es) into {name} for {len(pieces)} microbatches: call backward() "
            "once per microbatch, so that only one microbatch's graph is alive at a time",
            "microbatches-merged-into-one",
        )
    # The named causes first: a gradient left from before the call hides every other difference.
    if unused.grad is not None:
        expect(
            torch.count_nonzero(unused.grad).item() != 0,
            f"after {shown}, a parameter that loss_fn never uses holds a tensor of zeros; no backward pass reaches it, "
            "so its gradient is None, as after one backward() on cleared gradients: clear .grad to None, not to zeros",
            "zero-fill-same-as-none",
        )
        expect(
            False,
            f"after {shown}, a parameter that loss_fn never uses still holds the gradient it had before the call; "
            "clear .grad before accumulating",
            "stale-grad-after-update",
        )
    for i, (name, p) in enumerate((("W", W), ("b", b))):
        expect(
            p.is_leaf and p.requires_grad,
            f"after {shown}, {name} should still be a leaf that requires grad"
            ": update nothing in place here; let backward() add into .grad",
        )
        expect(
            p.grad is not None and p.grad.shape == p.shape,
            f"after {shown}, {name}.grad should be a tensor of shape {tuple(p.shape)}"
            ": leave each .grad with its parameter's shape (backward() on a scalar loss gives it that)",
        )
        got = p.grad.detach()
        if not matches(got, full[i]):
            expect(
                not any(matches(got, stale[i] + new) for new in (full[i], summed[i], summed[i] / len(pieces))),
                f"after {shown}, {name}.grad is the new gradient plus the one left over from before the "
                "parameters moved; clear .grad before accumulating",
                "stale-grad-after-update",
            )
            expect(
                not matches(got, summed[i] / len(pieces)),
                f"after {shown}, {name}.grad weights every microbatch mean equally; a microbatch of n samples "
                f"contributes n / {total} of the full-batch mean"
                "; scale each microbatch's loss by its share of the samples before backward()",
                "equal-weight-microbatch-means",
            )
            expect(
                not matches(got, summed[i]),
                f"after {shown}, {name}.grad is the sum of the microbatch mean gradients; scale each microbatch "
                "loss by its share n / N of the samples before backward()",
                "accumulated-grad-unscaled",
            )
        expect_close(got, full[i], f"after {shown}, {name}.grad is not the gradient of the mean loss over all "
                     f"{total} samples"
                     ": clear .grad before accumulating, then call backward() on each microbatch's loss weighted by its share of the samples", rtol=1e-9, atol=1e-12)


check_accumulate_grads((4, 2), seed=0)
print(
    "Checked microbatches of 4 and 2 rows after an earlier step, with an unused parameter: one loss and one "
    "backward() per microbatch, the full-batch mean gradient in W and b, None for the unused one. "
    "The grader also tests other sizes."
)

### BEGIN HIDDEN TESTS
for sizes, seed in (((5, 2, 7, 1), 31), ((3, 3, 3, 3), 32), ((1, 6), 33)):
    check_accumulate_grads(sizes, seed)
### END HIDDEN TESTS

# %% [markdown] safe_updates_summary
# ## What to remember
#
# * A step changes the parameters themselves, unrecorded and visible to the version counter;
#   the tensors stay the same leaves.
# * Clear gradients once per intended step; `None` and zeros are not interchangeable for an
#   optimizer, which skips a `None` gradient together with its state update.
# * Accumulated gradients add up correctly only at one parameter point and with each piece
#   weighted by its share of the samples.
#
# Section 6 puts these pieces into a complete raw-tensor training loop.
