# %% [markdown] raw_mlp_intro
# # 4 · The MNIST classifier from plain tensors
#
# Earlier you wrote the 784 → 128 → 10 classifier in NumPy and derived every gradient by hand.
# Here you rebuild it from plain tensors: no `nn.Module`, no `torch.optim`, only four
# parameter tensors, a forward function and a loss. Autograd supplies the derivatives.
#
# You will write
#
# 1. `raw_params`: the four parameters as leaves, initialised in the right order,
# 2. `raw_forward`: the logits of a batch,
# 3. `raw_loss`: the mean cross entropy of those logits against integer class labels.
#
# The data in this notebook are random numbers, not digits: they exercise the API, they do
# not train a digit classifier.
#
# **How to work.** Run the setup cell first. Replace the `NotImplementedError` lines of each
# answer cell with your code, run it, then run the check cell below it. The visible check
# tests what the exercise states on the page's own example; the grader runs more tests on other
# inputs, and a failure names the misconception it recognised, like
# `[misconception: op-after-requires-grad]`.

# %% raw_mlp_setup
import math

import torch
import torch.nn.functional as F

from autograd_checks import (
    COMMON_ERRORS, Diagnosis, call_answer, expect, expect_close, expect_tensor, quiet, seeded,
)

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# %% [markdown] md_raw_params
# ## Parameters are leaves: finish the values, then switch tracking on
#
# A parameter must be a **leaf**: a tensor that requires grad and was not produced by a
# recorded operation. Only leaves receive `.grad` from `backward()` by default, so the order
# of two steps matters:
#
# * `(torch.randn(3) * 0.01).requires_grad_()` scales an untracked tensor and only then asks
#   for tracking. The result is a leaf. This order is correct (an old anecdote blamed this
#   very line for a broken model; it was not the culprit).
# * `torch.randn(3, requires_grad=True) * 0.01` starts tracking first, so the
#   multiplication is recorded and its output is a non-leaf with a `grad_fn`. Its `.grad`
#   stays `None` after `backward()`, so the update step fails: `torch.optim.SGD` rejects a
#   non-leaf ("can't optimize a non-leaf Tensor"), and `p -= lr * p.grad` raises a
#   `TypeError` because `p.grad` is `None`.
#
# The scale of the initial weights is not arbitrary either. The first layer feeds a ReLU,
# so its weights are drawn from a standard normal and multiplied by $\sqrt{2/d}$, where $d$
# is the number of inputs (He initialisation). The output layer scales by $1/\sqrt{h}$,
# where $h$ is the hidden width. A fixed small factor such as 0.01, or $1/d$, shrinks the
# signal layer after layer instead of keeping its variance roughly constant. Other fan-in
# rules exist; this exercise fixes these two, so that everyone's weights can be checked.
#
# ### Exercise 1 (3 points)
#
# Write `raw_params(d=784, h=128, k=10, seed=0)`. Return the list `[W1, b1, W2, b2]`:
# `W1` of shape `(d, h)`, `b1` of shape `(h,)`, `W2` of shape `(h, k)`, `b2` of shape `(k,)`,
# all float64 leaves that require grad. Make one generator with
# `torch.Generator().manual_seed(seed)`; draw `W1` with `torch.randn(..., generator=...,
# dtype=torch.float64)` first and `W2` second, scale them as described, and start both
# biases at zero. The grader regenerates the same draws, so the order and dtype matter.

# %% answer answer_raw_params
from solutions.reference.raw_mlp import raw_params

# %% test test_raw_params points=3 targets=op-after-requires-grad,init-scale-wrong-rule,numpy-default-dtype,grad-on-by-default,cast-restores-precision
NAMES = ("W1", "b1", "W2", "b2")
params = call_answer(raw_params, 6, 4, 3, seed=0)
expect(
    isinstance(params, (list, tuple)) and len(params) == 4,
    "raw_params should return a list [W1, b1, W2, b2] of four tensors"
    ": return a list of the four tensors, in that order",
)


def check_raw_params(params, shown, d, h, k, seed):
    """What the exercise states about [W1, b1, W2, b2]: shapes, float64 leaves requiring grad, the seeded recipe."""
    expect(
        isinstance(params, list) and len(params) == 4,
        f"{shown} should return a list [W1, b1, W2, b2]"
        ": return a list of the four tensors, in that order",
    )
    for name, tensor, shape in zip(NAMES, params, ((d, h), (h,), (h, k), (k,))):
        expect_tensor(tensor, f"{name} from {shown}", shape=shape)
        expect(
            tensor.dtype == torch.float64,
            f"{name} from {shown} has dtype {tensor.dtype}: torch.randn and torch.zeros make float32 "
            "unless you pass dtype=torch.float64, and every parameter here is float64"
            "; pass it to every draw and every torch.zeros",
            "numpy-default-dtype",
        )
        expect(
            tensor.requires_grad,
            f"{name} from {shown} does not require grad, so backward() would never give it a gradient; "
            "call requires_grad_() once its values are final",
            "grad-on-by-default",
        )
        expect(
            tensor.is_leaf,
            f"{name} from {shown} is not a leaf (it was produced by {type(tensor.grad_fn).__name__}): "
            "it was scaled after requires_grad was set, so its .grad stays None; scale first, then call requires_grad_()",
            "op-after-requires-grad",
        )
    W1, b1, W2, b2 = (tensor.detach() for tensor in params)
    expect(
        torch.count_nonzero(b1).item() == 0 and torch.count_nonzero(b2).item() == 0,
        f"the biases from {shown} should start at zero: build them with torch.zeros",
    )
    generator = seeded(seed)
    first_draw = torch.randn(d, h, generator=generator, dtype=torch.float64)
    second_draw = torch.randn(h, k, generator=generator, dtype=torch.float64)
    layers = (
        ("W1", W1, first_draw, math.sqrt(2 / d), "sqrt(2 / d)"),
        ("W2", W2, second_draw, 1 / math.sqrt(h), "1 / sqrt(h)"),
    )
    for name, weight, draw, scale, rule in layers:
        ratio = weight / draw
        factor = ratio.mean().item()
        if torch.allclose(ratio, torch.full_like(ratio, factor), rtol=1e-9, atol=0.0):
            # float32 keeps about 7 significant digits: a factor right only to that level was a float32 number.
            expect(
                math.isclose(factor, scale, rel_tol=1e-9) or not math.isclose(factor, scale, rel_tol=1e-6),
                f"{name} from {shown} is the seeded draw times {factor!r}, which is {rule} = {scale!r} to about "
                "7 digits only: the factor was a float32 number (torch.tensor of a Python float is float32), "
                "and multiplying it into float64 cannot restore its digits. Keep the factor a float64 or a Python float",
                "cast-restores-precision",
            )
            expect(
                math.isclose(factor, scale, rel_tol=1e-9),
                f"{name} from {shown} is the seeded normal draw times {factor:.4g}, but this course fixes "
                f"the scales: sqrt(2 / d) for W1 and 1 / sqrt(h) for W2, so {name} needs {rule} = {scale:.4g}"
                "; scale each draw by its own rule before calling requires_grad_()",
                "init-scale-wrong-rule",
            )
        expect_close(
            weight,
            draw * scale,
            f"{name} from {shown} is not the seeded draw: use one generator made with "
            "torch.Generator().manual_seed(seed), draw W1 and then W2, in float64",
            rtol=1e-12,
            atol=1e-15,
        )


check_raw_params(params, "raw_params(6, 4, 3, seed=0)", 6, 4, 3, 0)
print(
    "Checked on raw_params(6, 4, 3, seed=0): four float64 leaves that require grad, their shapes, zero biases and "
    "the seeded draws scaled by sqrt(2 / d) and 1 / sqrt(h). The grader also tests other sizes, seeds and the defaults."
)

### BEGIN HIDDEN TESTS
# The defaults d=784, h=128, k=10, seed=0 are part of the stated signature, so one call leaves them out.
check_raw_params(call_answer(raw_params), "raw_params() with its default arguments (d=784, h=128, k=10, seed=0)", 784, 128, 10, 0)
for d, h, k, seed in ((784, 128, 10, 5), (20, 7, 4, 11), (3, 2, 2, 1)):
    check_raw_params(call_answer(raw_params, d, h, k, seed=seed), f"raw_params({d}, {h}, {k}, seed={seed})", d, h, k, seed)
### END HIDDEN TESTS

# %% [markdown] md_raw_forward
# ## The forward pass
#
# With `params = [W1, b1, W2, b2]` the network computes, for a batch `X` with one example per
# row,
#
# $$\text{logits} = \mathrm{relu}(X W_1 + b_1)\, W_2 + b_2 .$$
#
# The biases broadcast over the rows. The ReLU belongs to the hidden layer only: the last
# layer returns **logits**, unnormalised scores that may be negative, and the loss turns them
# into probabilities. For `X` of shape `(32, 784)` the logits have shape `(32, 10)`; after
# `backward()` on a scalar loss built from them, each of the four parameters holds a `.grad`
# of exactly its own shape.
#
# ### Exercise 2 (2 points)
#
# Write `raw_forward(X, params)` returning those logits. Use tensor operations only, so
# that autograd records the path from every parameter to the logits (no NumPy, no
# `.detach()`). The grader also calls `backward()` through your logits and compares every
# parameter's gradient with the chain rule.

# %% answer answer_raw_forward
from solutions.reference.raw_mlp import raw_forward

# %% test test_raw_forward points=2 targets=relu-on-output-logits,numpy-default-dtype,softmax-before-cross-entropy
import autograd_checks as checks


def check_raw_forward(batch, d, h, k, seed):
    """Seeded float64 parameters and inputs: the logits' shape, dtype and values, and the gradients through them."""
    generator = seeded(seed)
    params = [
        torch.randn(*shape, generator=generator, dtype=torch.float64).requires_grad_()
        for shape in ((d, h), (h,), (h, k), (k,))
    ]
    W1, b1, W2, b2 = (p.detach() for p in params)
    X = torch.randn(batch, d, generator=generator, dtype=torch.float64)
    shown = f"raw_forward(X, params) for X of shape ({batch}, {d})"
    logits = call_answer(raw_forward, X, params)
    expect_tensor(logits, shown, shape=(batch, k))
    expect(
        logits.dtype == torch.float64,
        f"{shown} has dtype {logits.dtype}, but X and the parameters are float64: keep float64 "
        "(no .float() or float32 conversion) so the logits keep every digit",
        "numpy-default-dtype",
    )
    pre_activation = X @ W1 + b1
    active = pre_activation > 0
    hidden = torch.where(active, pre_activation, torch.zeros_like(pre_activation))
    expected = hidden @ W2 + b2
    expect(
        not ((expected < 0).any() and torch.allclose(logits.detach(), expected.clamp(min=0), rtol=1e-10, atol=1e-12)),
        f"{shown} has no negative logits: a ReLU was applied to the output layer too; "
        "the last layer returns raw scores; apply the ReLU to the hidden layer only",
        "relu-on-output-logits",
    )
    expect(
        not torch.allclose(logits.detach(), torch.softmax(expected, dim=1), rtol=1e-10, atol=1e-12),
        f"{shown} holds probabilities, the softmax of the logits: cross entropy applies log-softmax itself, "
        "so it would take a softmax twice; return the raw scores relu(X @ W1 + b1) @ W2 + b2",
        "softmax-before-cross-entropy",
    )
    expect_close(
        logits,
        expected,
        f"{shown} is not relu(X @ W1 + b1) @ W2 + b2"
        ": compute it in that order, with the ReLU on the hidden layer only",
        rtol=1e-10,
        atol=1e-10,
    )
    expect(
        logits.requires_grad and logits.grad_fn is not None,
        f"{shown} is not connected to the parameters (computed under no_grad, detached, or through NumPy?)"
        "; compute with torch operations on the parameters themselves, with grad mode on",
    )
    cotangent = torch.randn(batch, k, generator=generator, dtype=torch.float64)
    call_answer(checks.backward_with_cotangent, logits, cotangent)
    through_relu = (cotangent @ W2.T) * active
    expected_grads = (X.T @ through_relu, through_relu.sum(0), hidden.T @ cotangent, cotangent.sum(0))
    for name, p, gradient in zip(("W1", "b1", "W2", "b2"), params, expected_grads):
        expect(
            p.grad is not None,
            f"after backward() through the logits of {shown}, {name}.grad is None: no gradient reached {name}, "
            "so its path to the logits was cut (by detach(), torch.no_grad() or a detour through NumPy)"
            "; compute with torch operations on the parameters themselves, with grad mode on",
        )
        expect(
            p.grad.shape == p.shape,
            f"after backward() through the logits of {shown}, {name}.grad should have shape {tuple(p.shape)}"
            ": compute with the parameters as they were given, so each gradient keeps its parameter's shape",
        )
        expect_close(
            p.grad,
            gradient,
            f"after backward() through the logits of {shown}, {name}.grad is not the chain-rule gradient"
            ": compute relu(X @ W1 + b1) @ W2 + b2 with torch operations on the parameters themselves",
            rtol=1e-9,
            atol=1e-10,
        )


check_raw_forward(5, 6, 4, 3, 0)
print(
    "Checked on a seeded float64 batch of shape (5, 6) with k = 3: logits of shape (5, 3) in float64, equal to "
    "relu(X @ W1 + b1) @ W2 + b2 (negative ones kept), and each parameter's gradient through them. "
    "The grader also tests the page's (32, 784) batch and other sizes."
)

### BEGIN HIDDEN TESTS
for batch, d, h, k, seed in ((32, 784, 128, 10, 7), (9, 5, 6, 3, 8)):
    check_raw_forward(batch, d, h, k, seed)
### END HIDDEN TESTS

# %% [markdown] md_raw_loss
# ## Cross entropy takes logits and int64 class indices
#
# `F.cross_entropy(logits, labels)` does two things in one numerically stable step: a
# log-softmax over the classes, then the negative log-likelihood of the correct class,
# averaged over the batch (the default reduction is the mean). Two consequences:
#
# * **Pass logits, not probabilities.** If you apply `softmax` yourself first, the loss
#   applies another log-softmax on top of your probabilities. The result is a different,
#   much flatter function: no error, just a wrong loss and weak gradients.
# * **Class labels are int64 indices**, one per row, in `range(C)`. In this mode
#   cross entropy rejects float labels and int32 labels (it also accepts uint8, but int64 is the
#   standard), and it takes no Python list. Labels rarely arrive in that form: a list from a
#   file, int32 from another library. Turning them into what the loss expects is your job. A
#   float target with the same shape as the logits means something else entirely (class
#   probabilities, a separate "soft target" contract that this exercise does not use).
#
# The gradient of the mean cross entropy with respect to the logits is
# $(\mathrm{softmax}(z) - \mathrm{onehot}(y)) / N$ for a batch of $N$ rows.
#
# ### Exercise 3 (3 points)
#
# Write `raw_loss(logits, y)`: the mean cross entropy of `logits` of shape `(N, C)` against
# the labels `y`, which may be a Python list of ints or a tensor of any integer dtype. Return
# a scalar tensor through which `backward()` reaches the logits (and so the parameters). The
# loss keeps the logits' precision: float64 logits give a float64 loss with every digit.

# %% answer answer_raw_loss
from solutions.reference.raw_mlp import raw_loss

# %% test test_raw_loss points=3 targets=softmax-before-cross-entropy,cross-entropy-label-dtype,numpy-default-dtype,cast-restores-precision,labels-index-in-any-dtype
# Errors that cross_entropy raises for labels of the wrong type, worded for you.
LABEL_ERRORS = COMMON_ERRORS + (
    ("target dtype", "cross-entropy-label-dtype",
     "cross_entropy was given labels that are not int64 class indices; convert them with .to(torch.int64)"),
    ("scalar type Long", "cross-entropy-label-dtype",
     "cross_entropy was given labels that are not int64 class indices; convert them with .to(torch.int64)"),
    ("must be Tensor", "cross-entropy-label-dtype",
     "cross_entropy was given the labels as a Python list; make an int64 tensor of them first"),
    # Labels used as an index as they came: int8 is no index, and a uint8 index is a mask of rows.
    ("used as indices", "labels-index-in-any-dtype",
     "the labels were used as an index in a dtype that cannot index; convert them with .to(torch.int64) first"),
    ("shape of the mask", "labels-index-in-any-dtype",
     "uint8 labels used as an index are a mask, not positions; convert them with .to(torch.int64) first"),
)


def log_softmax_rows(z):
    shifted = z - z.max(dim=1, keepdim=True).values
    return shifted - shifted.exp().sum(dim=1, keepdim=True).log()


def mean_cross_entropy(z, labels):
    return -log_softmax_rows(z)[torch.arange(len(labels)), labels].mean()


def check_raw_loss(z, labels, kind, given):
    """raw_loss on float64 logits z and the labels as `given` (described by `kind`): value, dtype and gradient."""
    rows, classes = z.shape
    logits = z.clone().requires_grad_()
    shown = f"raw_loss(logits, labels) with the labels given as {kind}"
    loss = call_answer(raw_loss, logits, given, known_errors=LABEL_ERRORS)
    expect_tensor(loss, shown, shape=())
    expect(
        loss.dtype == torch.float64,
        f"{shown} has dtype {loss.dtype}, but the logits are float64: keep float64 "
        "(no .float() on the logits) so the loss keeps every digit",
        "numpy-default-dtype",
    )
    probabilities = log_softmax_rows(z).exp()
    expect(
        not torch.allclose(loss.detach(), mean_cross_entropy(probabilities, labels), rtol=1e-9, atol=0.0),
        f"{shown} is the cross entropy of softmax probabilities: cross_entropy applies log-softmax "
        "itself, so pass it the raw logits",
        "softmax-before-cross-entropy",
    )
    exact = mean_cross_entropy(z, labels)
    # float32 keeps about 7 significant digits: an error of that size means float32 work cast back to float64.
    error = abs(loss.detach().item() - exact.item())
    expect(
        not 1e-9 * abs(exact.item()) < error <= 1e-5 * abs(exact.item()),
        f"{shown} is float64 but agrees with the exact loss only to about 7 digits: it was computed in "
        "float32 and cast to float64 afterwards, and the cast cannot bring back the digits float32 dropped",
        "cast-restores-precision",
    )
    expect_close(
        loss,
        exact,
        f"{shown} is not the mean cross entropy of the logits"
        ": compute it from the raw logits, with F.cross_entropy or log_softmax and the mean over rows",
        rtol=1e-9,
        atol=1e-12,
    )
    expect(
        loss.requires_grad,
        f"{shown} is not connected to the logits, so backward() cannot reach the parameters"
        "; compute it with torch operations on the logits themselves, with grad mode on",
    )
    call_answer(loss.backward)
    onehot = torch.zeros(rows, classes, dtype=torch.float64)
    onehot[torch.arange(rows), labels] = 1.0
    expect_close(logits.grad, (probabilities - onehot) / rows,
                 f"after backward() on {shown}, logits.grad is not (softmax - onehot) / N"
                 ": compute the mean cross entropy from the raw logits and the labels as given", rtol=1e-9, atol=1e-12)


page_logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]], dtype=torch.float64)
page_labels = torch.tensor([0, 2])
check_raw_loss(page_logits, page_labels, "a Python list", [0, 2])
check_raw_loss(page_logits, page_labels, "an int32 tensor", page_labels.to(torch.int32))
check_raw_loss(page_logits, page_labels, "a uint8 tensor", page_labels.to(torch.uint8))
print(
    "Checked on two rows of float64 logits with the labels [0, 2], as a Python list, int32 and uint8: a float64 "
    "scalar with every digit of the mean cross entropy, and logits.grad = (softmax - onehot) / N. "
    "The grader also tests other sizes and integer dtypes."
)

### BEGIN HIDDEN TESTS
cases = (
    (32, 10, "a Python list", lambda t: t.tolist(), 21),
    (7, 4, "an int32 tensor", lambda t: t.to(torch.int32), 22),
    (5, 3, "an int64 tensor", lambda t: t, 23),
    (6, 5, "an int16 tensor", lambda t: t.to(torch.int16), 24),
    # The 8-bit kinds: uint8 indexes as a mask of rows, int8 does not index at all.
    (8, 5, "a uint8 tensor", lambda t: t.to(torch.uint8), 25),
    (6, 4, "an int8 tensor", lambda t: t.to(torch.int8), 26),
)
for rows, classes, kind, convert, seed in cases:
    generator = seeded(seed)
    z = 3 * torch.randn(rows, classes, generator=generator, dtype=torch.float64)
    labels = torch.randint(0, classes, (rows,), generator=generator)
    check_raw_loss(z, labels, kind, convert(labels))
### END HIDDEN TESTS

# %% [markdown] raw_mlp_summary
# ## Putting the pieces together
#
# Chained, the three functions give one gradient evaluation of the whole network: make the
# parameters once, push a batch through `raw_forward`, score the logits with `raw_loss`, and
# call `backward()` on that scalar. A small run with made-up data, say 8 rows of 20 features
# and 4 classes, shows the plumbing:
#
# ```python
# W1, b1, W2, b2 = params = raw_params(d=20, h=16, k=4, seed=3)
# batch = torch.rand(8, 20, dtype=torch.float64, generator=seeded(4))
# labels = [0, 3, 1, 1, 2, 0, 3, 2]
# raw_loss(raw_forward(batch, params), labels).backward()
# print([tuple(p.grad.shape) for p in params])   # [(20, 16), (16,), (16, 4), (4,)]
# print(all(p.is_leaf for p in params))          # True: the four tensors are still the parameters
# ```
#
# Nothing here learns digits: the inputs and labels are invented, so the run only confirms that
# every parameter is still a leaf and received a gradient of its own shape. Section 5 turns
# those gradients into parameter updates.
