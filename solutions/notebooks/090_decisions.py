# %% [markdown] dec_intro
# # 9–11 · Cheat sheet, decisions and what to remember
#
# This last notebook collects the lesson into decisions you will make every time you write
# training code, and asks you to recall the central results: the hand example, the shapes of
# a vector-Jacobian product, which tool cuts what, and what `model.eval()` really switches.
# Two written answers close it; a TA grades those by hand.
#
# **How to work.** Run the setup cell first. Replace the `NotImplementedError` lines of each
# answer cell with your code, run it, then run the check cell under it. The visible check tests
# what the exercise states on the page's own example; the grader runs further tests on other inputs and names the
# misconception it recognises when a test fails. Written answers go in the cells marked
# `YOUR ANSWER HERE`.

# %% dec_setup
import math

import torch

import autograd_checks as checks
from autograd_checks import (
    COMMON_ERRORS,
    call_answer,
    counting_saved_tensors,
    expect,
    expect_close,
    expect_tensor,
    in_kernel,
    seeded,
    seeded_linear,
)

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# %% [markdown] md_cheat_sheet
# ## 9 · The cheat sheet
#
# * **`.grad` is `None`? Find out why before you act.** Look at the tensor's `requires_grad`,
#   `is_leaf` and `grad_fn`, and at whether the loss depends on it at all. The same `None` shows
#   up for a non-leaf, for a parameter the loss never used, before any backward, for work done
#   under `no_grad`, and after a deliberate reset.
# * **A vector output needs a cotangent.** `backward()` seeds a one-element loss by itself; for
#   anything larger pass `v` explicitly, and you get $v^\top J$.
# * **One gradient reset per optimizer step.** When you accumulate over several pieces, divide
#   by the count that your loss reduction really used.
# * **Backward first, then update inside `torch.no_grad()`.**
# * **Use the smallest tool that does the job.** A block of code that needs no graph:
#   `torch.no_grad()`. One edge to cut: `detach()`. A value leaving for a log: `.item()` or a
#   host copy. Memory that must not be shared: `clone()`.
# * **`model.eval()` is about layers, not about autograd.** It changes what dropout and batch
#   norm do and leaves gradient recording on; some evaluations (saliency maps, adversarial
#   checks) depend on exactly that.
#
# The exercises below check that these rules have become reflexes.

# %% [markdown] md_hand_example_report
# ## The hand example, once more
#
# With data $x = 2$ and target $y = 5$, and parameters $w = 3$ and $b = 1$:
#
# $$\text{pred} = w x + b = 7, \qquad \text{err} = \text{pred} - y = 2, \qquad L = \text{err}^2 = 4 .$$
#
# Backward multiplies local derivatives along each path: $\partial L/\partial \text{err} = 2\,\text{err} = 4$,
# $\partial \text{err}/\partial \text{pred} = 1$, $\partial \text{pred}/\partial w = x = 2$ and
# $\partial \text{pred}/\partial b = 1$, so $\partial L/\partial w = 8$ and $\partial L/\partial b = 4$.
#
# ### Exercise 1 (3 points)
#
# Write `hand_example_report(x, w, b, target)` for any four Python floats: return a dict with
# keys `"loss"`, `"dw"` and `"db"` holding Python floats (the logging boundary: `.item()`).
# Use autograd or the chain rule, as you like, but **compute in float64**: the grader checks
# other numbers than the ones above to about nine significant digits, which float32 (what
# `torch.tensor` makes from Python floats unless told otherwise) cannot give. Whole numbers
# hide the difference; $w = 3.1$ shows it: float64 gives the loss 4.84, $\partial L/\partial w = 8.8$
# and $\partial L/\partial b = 4.4$, float32 gives 4.839999198913574, 8.799999237060547 and
# 4.399999618530273.

# %% answer answer_hand_example_report
from solutions.reference.decisions import hand_example_report

# %% test test_hand_example_report points=3 targets=square-rule-factor-dropped,grad-on-by-default,numpy-default-dtype
def check_hand_report(x, w, b, target):
    """The report at one point against the closed form, in float64 digits."""
    call = f"hand_example_report(x={x:.4g}, w={w:.4g}, b={b:.4g}, target={target:.4g})"
    report = call_answer(hand_example_report, x, w, b, target)
    expect(
        isinstance(report, dict) and set(report) == {"loss", "dw", "db"},
        f"{call} should return a dict with keys 'loss', 'dw', 'db'"
        ": return a dict with exactly these keys",
    )
    for key in ("loss", "dw", "db"):
        expect(
            isinstance(report[key], float),
            f"{call}: report[{key!r}] should be a Python float (call .item() on a one-element tensor), "
            f"got {type(report[key]).__name__}: turn each one-element tensor into a Python float with .item()",
        )
    error = w * x + b - target  # closed form: L = err**2, dL/dw = 2 err x, dL/db = 2 err
    expected = {"loss": error**2, "dw": 2 * error * x, "db": 2 * error}
    # The same computation in float32, as torch.tensor(w, requires_grad=True) would do it.
    w32, b32 = torch.tensor(w, dtype=torch.float32), torch.tensor(b, dtype=torch.float32)
    error32 = w32 * x + b32 - target
    in_float32 = {"loss": (error32**2).item(), "dw": (2 * error32 * x).item(), "db": (2 * error32).item()}
    close64 = all(math.isclose(report[k], expected[k], rel_tol=1e-9, abs_tol=1e-12) for k in expected)
    close32 = all(math.isclose(report[k], in_float32[k], rel_tol=1e-5, abs_tol=1e-6) for k in expected)
    expect(
        close64 or not close32,
        f"{call}: the results match a float32 computation, not a float64 one: torch.tensor(w) makes float32 "
        "from a Python float. Create the leaves with dtype=torch.float64",
        "numpy-default-dtype",
    )
    halved = all(math.isclose(report[k], expected[k] / 2, rel_tol=1e-9, abs_tol=1e-12) for k in ("dw", "db"))
    expect(
        not halved,
        f"{call}: dw and db are half the true gradients; the local derivative of err**2 with respect to err is 2 * err"
        "; multiply by 2 * err on the way to dw and db",
        "square-rule-factor-dropped",
    )
    for key in ("loss", "dw", "db"):
        expect_close(
            torch.tensor(report[key], dtype=torch.float64),
            torch.tensor(expected[key], dtype=torch.float64),
            f"{call}: {key!r} is not the value of the loss (w * x + b - target) ** 2 or its derivative"
            ": compute the loss in float64 from leaves w and b, call backward() and read w.grad and b.grad",
            rtol=1e-9,
            atol=1e-12,
        )


check_hand_report(2.0, 3.0, 1.0, 5.0)
check_hand_report(2.0, 3.1, 1.0, 5.0)  # the page's w = 3.1, which float32 cannot hold
print(
    "Checked on the page's examples (x=2, b=1, target 5, with w=3 and w=3.1): three Python floats, loss 4, dw 8 "
    "and db 4, then 4.84, 8.8 and 4.4 to float64's digits. The grader also tests other numbers."
)

### BEGIN HIDDEN TESTS
generator = seeded(90)
for _ in range(4):
    check_hand_report(*(3 * torch.randn(4, dtype=torch.float64, generator=generator)).tolist())
### END HIDDEN TESTS

# %% [markdown] task task_hand_graph points=0
# ### Written answer A (3 points, graded by a TA)
#
# Reconstruct the graph of the hand example from memory, without running code, for **new
# values**: data $x = 3$ and target $y = 4$, parameters $w = -1$ and $b = 2$ (the same loss
# $L = (w x + b - y)^2$). List the nodes from the inputs to the loss with their values; for
# each edge give its local derivative **at these values**; say which tensors are leaves, which
# of them require grad, and which tensors hold a `.grad` after `loss.backward()`. Then show how
# $\partial L/\partial w$ and $\partial L/\partial b$ come out of the local derivatives.
#
# === BEGIN MARK SCHEME ===
#
# Marking (3 points; half points allowed):
#
# * **1 point, the graph.** Leaves: `x` and `y` (the target), which do not require grad, and
#   `w` and `b`, which do. Operations in order: a product `w * x` and an addition of `b`
#   (together `pred`, possibly drawn as one node), a subtraction giving `err`, a square giving
#   `loss`. `pred`, `err` and `loss` are non-leaves with a `grad_fn`. A drawing that omits
#   `x`/`y` as inputs or calls `pred` a leaf loses this point.
# * **1 point, the values and local derivatives at x = 3, y = 4, w = -1, b = 2:** pred = -1,
#   err = -5, loss = 25; dloss/derr = 2 · err = -10; derr/dpred = 1; dpred/dw = x = 3;
#   dpred/db = 1. The values, not only the formulas. Copying the worked example's numbers
#   (4, 2, 8, 4) earns nothing here; half a point if one value is wrong but the rest follow
#   from it correctly.
# * **1 point, the products and where they land:** dL/dw = -10 · 1 · 3 = -30 and
#   dL/db = -10 · 1 · 1 = -10, stored in `w.grad` and `b.grad`; `x.grad` and `y.grad` stay `None`
#   (they never required grad); `pred`, `err` and `loss` keep no `.grad` unless
#   `retain_grad()` was called. Stating that backward inverts the operations loses the point.
#
# === END MARK SCHEME ===

# %% [markdown] answer answer_hand_graph points=3
# Leaves: x = 3 and y = 4 are data (requires_grad=False); w = -1 and b = 2 are parameters
# (requires_grad=True). Forward: t = w * x = -3 (MulBackward0), pred = t + b = -1 (AddBackward0),
# err = pred - y = -5 (SubBackward0), loss = err ** 2 = 25 (PowBackward0); these are non-leaves.
#
# Local derivatives: dloss/derr = 2 * err = -10, derr/dpred = 1, dpred/dt = 1, dpred/db = 1,
# dt/dw = x = 3. Backward multiplies along each path: dL/dw = -10 * 1 * 1 * 3 = -30 lands in
# w.grad, dL/db = -10 * 1 * 1 = -10 lands in b.grad. x.grad and y.grad stay None (not tracked);
# the intermediates keep no .grad unless retain_grad() was called.

# %% [markdown] md_weight_and_input_vjps
# ## Vector-Jacobian products of an affine map
#
# For $Y = X W$ with $X$ of shape $(B, I)$ and $W$ of shape $(I, O)$, backward receives an
# upstream gradient $G = \partial L / \partial Y$ of shape $(B, O)$ and must return the
# gradients for both inputs. Written out, both are single matrix products:
#
# * the input gradient $G W^\top$, one entry per input;
# * the weight gradient $X^\top G$, one entry per weight.
#
# Neither needs the Jacobian of $Y$ with respect to $W$. Flattened to a matrix (one row per
# entry of $Y$, one column per entry of $W$) it would have $B O \times I O$ entries, most of
# them zero. Two matrix products, each about as costly as the forward one, are where the
# rule of thumb "backward of an affine map costs about twice the forward" comes from. That
# ratio belongs to this map when both gradients are needed: recomputing activations
# (checkpointing), operations whose derivatives cost more, or a request for the whole Jacobian
# all give other ratios. With few inputs and many outputs, forward mode (JVPs, which push an
# input direction forward) can be the better choice.
#
# ### Exercise 2 (3 points)
#
# Write `weight_and_input_vjps(X, W, G)`: return `(dX, dW)`, the gradients of $\sum (G \odot Y)$
# with respect to `X` and to `W`, the input gradient first whatever order the name suggests (the
# same order as `affine_vjp` in notebook 060), using one matrix product each and no Jacobian. The grader compares them with autograd on random
# sizes, including one where a dense Jacobian would be large, stops your function at the
# first tensor far bigger than the two products need, and counts the matrix products it runs:
# two in all (autograd, differentiating `X @ W`, would run three).

# %% answer answer_weight_and_input_vjps
from solutions.reference.decisions import weight_and_input_vjps

# %% test test_weight_and_input_vjps points=3 targets=vjp-transposed-factors,dense-jacobian-for-vjp,autograd-pays-the-forward-product
def check_vjps(seed, B, I, O):
    """Seeded X, W, G: no Jacobian, two products, and both gradients equal to autograd's pullback."""
    generator = seeded(100 + seed)
    X = torch.randn(B, I, dtype=torch.float64, generator=generator)
    W = torch.randn(I, O, dtype=torch.float64, generator=generator)
    G = torch.randn(B, O, dtype=torch.float64, generator=generator)
    # Independent reference: autograd's own pullback of Y = X @ W with cotangent G.
    X_leaf, W_leaf = X.clone().requires_grad_(), W.clone().requires_grad_()
    (X_leaf @ W_leaf).backward(G)
    call = f"weight_and_input_vjps for X:{(B, I)}, W:{(I, O)}, G:{(B, O)}"
    # The two products never need more than max(B*I, I*O, B*O) entries; the dense Jacobian needs (B*O) * (I*O).
    budget = 8 * max(B * I, I * O, B * O)
    result, watched = checks.call_watched(weight_and_input_vjps, X.clone(), W.clone(), G.clone(), limit=budget)
    checks.expect_within(
        watched,
        f"{call} built a tensor of more than {budget} entries: the Jacobian of Y with respect to W alone has "
        f"{B * O} x {I * O} entries. Two matrix products give both gradients; compute dX = G @ W.T and dW = X.T @ G",
        "dense-jacobian-for-vjp",
    )
    expect(
        watched["products"] <= 2,
        f"{call} ran {watched['products']} matrix products where two give both gradients (G @ W.T and X.T @ G); "
        "differentiating X @ W with autograd runs the forward product as well"
        ": write the two products yourself, dX = G @ W.T and dW = X.T @ G",
        "autograd-pays-the-forward-product" if watched["products"] >= 3 else None,
    )
    expect(
        isinstance(result, tuple) and len(result) == 2,
        f"{call} should return a tuple (dX, dW)"
        ": return a tuple of the two tensors, dX first",
    )
    dX, dW = result
    expect(
        not (
            isinstance(dX, torch.Tensor)
            and isinstance(dW, torch.Tensor)
            and (B, I) != (I, O)
            and (tuple(dX.shape), tuple(dW.shape)) == ((I, O), (B, I))
        ),
        f"{call} returned the weight gradient first: return (dX, dW), the input gradient G @ W.T first",
    )
    expect_tensor(dW, f"dW of {call}")
    transposed = tuple(dW.shape) == (O, I) and torch.allclose(dW.detach().double(), W_leaf.grad.T, rtol=1e-9, atol=1e-12)
    expect(
        not transposed,
        f"{call}: dW is the transpose of the weight gradient (shape {(O, I)}); a gradient has the shape of its "
        "parameter, (I, O), which X.T @ G gives; compute dW = X.T @ G",
        "vjp-transposed-factors",
    )
    expect_tensor(dW, f"dW of {call}", shape=(I, O))
    expect_close(
        dW,
        W_leaf.grad,
        f"dW of {call} is not the gradient of sum(G * (X @ W)) with respect to W"
        ": compute dW = X.T @ G",
        rtol=1e-9,
        atol=1e-12,
    )
    expect_tensor(dX, f"dX of {call}", shape=(B, I))
    expect_close(
        dX,
        X_leaf.grad,
        f"dX of {call} is not the gradient of sum(G * (X @ W)) with respect to X"
        ": compute dX = G @ W.T",
        rtol=1e-9,
        atol=1e-12,
    )


check_vjps(10, 4, 3, 5)
print(
    "Checked B=4, I=3, O=5 (the Jacobian would have 20 x 15 entries): no tensor larger than the products need, "
    "at most two matrix products, dX of shape (B, I) and dW of shape (I, O) equal to autograd's pullback. "
    "The grader also tests other sizes."
)

### BEGIN HIDDEN TESTS
for seed, (B, I, O) in enumerate(((5, 3, 2), (2, 6, 4), (1, 4, 7), (3, 3, 3), (40, 24, 16))):
    check_vjps(seed, B, I, O)
### END HIDDEN TESTS

# %% [markdown] md_jacobian_and_vjp_shapes
# ### Exercise 3 (2 points)
#
# Write `jacobian_and_vjp_shapes(B, I, O)`: for the same map, return a dict of tuples of ints
# with the shapes of the input gradient (`"dX"`), the weight gradient (`"dW"`) and the
# flattened Jacobian of $Y$ with respect to $W$ (`"jacobian"`: rows follow the entries of
# $Y$, columns the entries of $W$). The grader uses random sizes and measures the true shapes
# with autograd.

# %% answer answer_jacobian_and_vjp_shapes
from solutions.reference.decisions import jacobian_and_vjp_shapes

# %% test test_jacobian_and_vjp_shapes points=2 targets=jacobian-shaped-like-parameter,vjp-transposed-factors
def check_shapes(B, I, O, generator):
    """The three shapes against those autograd measures on seeded X and W of these sizes."""
    X = torch.randn(B, I, dtype=torch.float64, generator=generator)
    W = torch.randn(I, O, dtype=torch.float64, generator=generator)
    # Measure the true shapes: the full Jacobian has shape (B, O, I, O) before flattening.
    jacobian = torch.autograd.functional.jacobian(lambda weight: X @ weight, W)
    X_leaf, W_leaf = X.clone().requires_grad_(), W.clone().requires_grad_()
    (X_leaf @ W_leaf).backward(torch.ones(B, O, dtype=torch.float64))
    expected = {
        "dX": tuple(X_leaf.grad.shape),
        "dW": tuple(W_leaf.grad.shape),
        "jacobian": (jacobian.shape[0] * jacobian.shape[1], jacobian.shape[2] * jacobian.shape[3]),
    }
    call = f"jacobian_and_vjp_shapes(B={B}, I={I}, O={O})"
    shapes = call_answer(jacobian_and_vjp_shapes, B, I, O)
    expect(
        isinstance(shapes, dict) and set(shapes) == set(expected),
        f"{call} should return a dict with keys 'dX', 'dW', 'jacobian'"
        ": return a dict with exactly these keys",
    )
    for key, shape in shapes.items():
        expect(
            isinstance(shape, tuple) and all(isinstance(n, int) for n in shape),
            f"{call}: shapes[{key!r}] should be a tuple of ints, got {shape!r}"
            ": give each shape as a tuple of Python ints",
        )
    got = {key: tuple(shapes[key]) for key in expected}
    expect(
        got["jacobian"] != (I, O),
        f"{call}: the Jacobian is not shaped like W; it has a row for each of the {B * O} entries of Y and a column "
        f"for each of the {I * O} entries of W; count (B * O, I * O) for it",
        "jacobian-shaped-like-parameter",
    )
    expect(
        got["dW"] != (O, I) or I == O,
        f"{call}: 'dW' is {got['dW']}, the shape of G.T @ X, the transposed product: a gradient has the shape of "
        f"its parameter; give dW W's shape ({I}, {O}), the shape of X.T @ G",
        "vjp-transposed-factors",
    )
    for key in ("dX", "dW", "jacobian"):
        expect(
            got[key] == expected[key],
            f"{call}: {key!r} should be {expected[key]}, got {got[key]}"
            ": work each shape out from the sizes (B, I, O) you are given",
        )


check_shapes(4, 3, 2, seeded(0))
print(
    "Checked B=4, I=3, O=2 against the shapes autograd measures: dX (4, 3), dW (3, 2), the flattened Jacobian "
    "(8, 6). The grader also tests other sizes."
)

### BEGIN HIDDEN TESTS
generator = seeded(11)
for B, I, O in torch.randint(2, 7, (5, 3), generator=generator).tolist():
    check_shapes(B, I, O, generator)
### END HIDDEN TESTS

# %% [markdown] md_tool_for
# ## Choosing the tool
#
# Four tools look alike and do different things:
#
# | tool | what it does | what it does not do |
# |---|---|---|
# | `with torch.no_grad():` | nothing computed inside the block is recorded | it does not detach tensors that already have a history |
# | `t.detach()` | a tensor with no history, for one edge | it shares storage with `t`: an in-place change to one shows in the other |
# | `t.item()` | a Python number from a one-element tensor (any shape) | it is only for one element; on a GPU it may have to wait for the device |
# | `t.clone()` | new storage, same values | it keeps a differentiable edge back to `t` when tracking is on |
#
# The tools chain: the result of one can be handed to the next. One exception to "nothing inside `no_grad` is tracked": a factory call that asks for it, such
# as `torch.zeros(3, requires_grad=True)`, still makes a leaf that requires grad.
# `.data` also gives an untracked view but bypasses the version-counter safety checks; do not
# use it for updates. For logging, `detach().cpu().numpy()` can still share memory with the
# tensor on the CPU, so copy it if the values must not change; a detached tensor is as safe a
# logging value as a Python number when you do not need a number.
#
# For example, with a tracked `x = torch.tensor([2., 3.], requires_grad=True)`: `x.clone()`
# has its own `data_ptr()` and a `grad_fn`; `x.detach()` has the same `data_ptr()` and does
# not require grad, so setting its first entry to 8 (under `no_grad`) makes `x[0]` equal 8
# too; a `detach().clone()` snapshot taken before that still holds 2.
#
# ### Exercise 4 (3 points)
#
# Write `tool_for(situation)` that returns one of `"no_grad"`, `"detach"`, `"item"`,
# `"clone"` or `"detach_clone"` for each of these situations:
#
# Each situation says what the code is for; which property it needs, and so which tool, is for
# you to work out from the table above.
#
# | key | situation |
# |---|---|
# | `"validation_loop"` | after each epoch, a function runs the model over 200 validation batches and reports the mean loss and the accuracy |
# | `"sgd_update"` | right after `backward()`, every parameter `p` is moved by `lr * p.grad` by hand, without an optimizer |
# | `"constant_target"` | a consistency term pulls the model's prediction on an augmented image towards its own prediction on the clean image, computed earlier in the same step; only the augmented prediction should move |
# | `"loss_history"` | each step's loss is written into a JSON line of the training log with `json.dumps`, which a plotting script reads when training ends |
# | `"masked_copy"` | a hidden activation `h` is saved by the layer that made it; the next layer should see `h` with some entries set to zero by an in-place write, and the loss should still train the layers below |
# | `"best_checkpoint"` | whenever the validation loss improves, the weights are put aside in a dict, and training goes on updating the live weights in place; at the end the dict is loaded back |

# %% answer answer_tool_for
from solutions.reference.decisions import tool_for

# %% test test_tool_for points=3 targets=detach-copies-storage,clone-cuts-graph,no-grad-detaches-existing,evaluation-without-no-grad
TOOLS = ("no_grad", "detach", "item", "clone", "detach_clone")
for situation in ("validation_loop", "sgd_update", "constant_target", "loss_history", "masked_copy"):
    answer = call_answer(tool_for, situation)
    expect(
        answer in TOOLS,
        f"tool_for({situation!r}) should return one of {TOOLS}, got {answer!r}"
        ": return one of these names, exactly as written",
    )
# The page works one situation through: a snapshot taken with detach().clone() keeps its values.
answer = call_answer(tool_for, "best_checkpoint")
expect(
    answer in TOOLS,
    f"tool_for('best_checkpoint') should return one of {TOOLS}, got {answer!r}"
    ": return one of these names, exactly as written",
)
expect(
    answer != "detach",
    "tool_for('best_checkpoint') returned 'detach', which does not fit: detach() gives a tensor with the same "
    "data_ptr() as the parameter, so the next in-place update rewrites the 'snapshot'; it needs its own storage too"
    "; choose the tool that gives new memory cut from the graph",
    "detach-copies-storage",
)
expect(
    answer != "clone",
    "tool_for('best_checkpoint') returned 'clone', which does not fit: clone() of a parameter still has a grad_fn "
    "(CloneBackward0) and requires grad, so the snapshot stays connected to the graph; it must be cut from the "
    "history as well as copied; choose the tool that gives new memory cut from the graph",
    "clone-cuts-graph",
)
expect(
    answer == "detach_clone",
    f"tool_for('best_checkpoint') returned {answer!r}: the page's example shows which tool keeps 2"
    ": choose the tool whose copy keeps 2 when the parameter moves on",
)
print(
    "Checked every situation is answered with a tool name, and the checkpoint the page works through (x, its "
    "detach() and clone(), a snapshot that still holds 2) gets detach_clone. The grader also judges the other five."
)

### BEGIN HIDDEN TESTS
needs = {
    "validation_loop": ("no_grad", "a whole region of code needs no graph: switch recording off for the block"),
    "sgd_update": ("no_grad", "the update must not be recorded, and an in-place change to a leaf is only allowed with recording off"),
    "constant_target": ("detach", "one existing edge must be cut while everything else stays tracked"),
    "loss_history": ("item", "json.dumps writes Python numbers and refuses tensors, so the log line needs the loss as a number"),
    "masked_copy": ("clone", "the copy needs its own storage and must keep its edge back so gradients still flow"),
    "best_checkpoint": ("detach_clone", "the snapshot needs its own storage and no history"),
}
confusions = {
    ("best_checkpoint", "detach"): (
        "detach-copies-storage",
        "detach() gives a tensor with the same data_ptr() as the parameter, so the next in-place update rewrites "
        "the 'snapshot'; it needs its own storage too",
    ),
    ("masked_copy", "detach"): (
        "detach-copies-storage",
        "detach() shares storage, so masking it in place also masks the original, and it cuts the gradient path",
    ),
    ("best_checkpoint", "clone"): (
        "clone-cuts-graph",
        "clone() of a parameter still has a grad_fn (CloneBackward0) and requires grad, so the snapshot stays "
        "connected to the graph; it must be cut from the history as well as copied",
    ),
    ("loss_history", "clone"): (
        "clone-cuts-graph",
        "clone() keeps the loss's history (it still has a grad_fn), and json.dumps cannot write a tensor: the log "
        "line needs the loss as a Python number",
    ),
    ("loss_history", "detach"): (
        None,
        "a detached tensor keeps no graph, but it is still a tensor, which json.dumps cannot write: the log line "
        "needs the loss as a Python number",
    ),
    ("loss_history", "detach_clone"): (
        None,
        "a detached copy keeps no graph and has memory of its own, but it is still a tensor, which json.dumps "
        "cannot write: the log line needs the loss as a Python number",
    ),
    **{
        ("validation_loop", late): (
            "evaluation-without-no-grad",
            "cutting the results off afterwards leaves every operation of the loop recorded, each saving tensors for "
            "a backward pass that evaluation never runs; switch recording off for the whole block",
        )
        for late in ("detach", "detach_clone", "item")
    },
    ("constant_target", "no_grad"): (
        "no-grad-detaches-existing",
        "the target already exists with its history; torch.no_grad() only stops recording inside its block and "
        "cannot cut an edge that was recorded before",
    ),
}
for situation, (tool, why) in needs.items():
    answer = call_answer(tool_for, situation)
    expect(
        answer in TOOLS,
        f"tool_for({situation!r}) should be one of {TOOLS}, got {answer!r}"
        ": return one of these names, exactly as written",
    )
    if answer != tool:
        misconception, explanation = confusions.get((situation, answer), (None, why))
        expect(
            False,
            f"tool_for({situation!r}) returned {answer!r}, which does not fit: {explanation}"
            "; choose the tool whose effect fits what this situation needs",
            misconception,
        )
### END HIDDEN TESTS

# %% [markdown] md_evaluate_without_graph
# ## What `model.eval()` changes
#
# `model.train()` and `model.eval()` set a flag (`module.training`) on a module and all its
# children. Layers read it: dropout zeroes random activations only in training mode, and
# batch norm normalises with the batch's own statistics (and updates its running averages)
# in training mode but with the stored running averages in evaluation mode.
#
# That flag has nothing to do with autograd. After `model.eval()`, grad mode is still on
# (`torch.is_grad_enabled()` is `True`), and an output computed from parameters that require
# grad still requires grad and carries a graph. Conversely `torch.no_grad()` stops
# recording but leaves dropout dropping and batch norm using batch statistics. Plain
# evaluation wants both switches; a saliency map (the gradient of an output with respect to
# the input) wants evaluation behaviour *with* gradients, which is why the two are separate.
#
# ### Exercise 5 (3 points)
#
# Write `evaluate_without_graph(model, inputs)`: return `model(inputs)` computed with
# evaluation behaviour (no dropout, running statistics) and without recording a graph, and
# leave the model in evaluation mode. The grader uses models with dropout and batch norm and
# compares your outputs with the closed-form evaluation-mode result, and counts the tensors autograd
# saves while your function runs: detaching the outputs afterwards is too late, the graph was
# already built.

# %% answer answer_evaluate_without_graph
from solutions.reference.decisions import evaluate_without_graph

# %% test test_evaluate_without_graph points=3 targets=eval-disables-grad,no-grad-disables-dropout,evaluation-without-no-grad
def check_evaluation(name, build, batch, features, seed):
    """A model in training mode, built beside your code: evaluation-mode outputs, no graph, the model left in eval."""
    _, closed_form = build()  # the expected outputs come from the grader's own copy of the model
    model, _ = in_kernel(build)  # the same model, built beside the student's code
    model.train()
    inputs = torch.randn(batch, features, dtype=torch.float64, generator=seeded(seed))
    with torch.no_grad():
        expected = closed_form(inputs)
    call = f"evaluate_without_graph({name} model, inputs)"
    switches = []  # the modes your code asks of the model, True for training
    in_kernel(checks.noting_mode_switches, model, switches)
    with counting_saved_tensors() as saved:
        outputs = call_answer(evaluate_without_graph, model, inputs)
    expect(
        torch.is_grad_enabled(),
        f"grad mode is switched off after {call}: use the block form `with torch.no_grad():` so it comes back on",
    )
    expect(
        all(p.requires_grad for p in in_kernel(list, model.parameters())),
        f"{call} switched requires_grad off on the model's parameters; the model must still be trainable afterwards"
        ": leave requires_grad alone and stop recording with torch.no_grad() instead",
    )
    expect_tensor(outputs, call, shape=expected.shape)
    expect(
        not outputs.requires_grad and outputs.grad_fn is None,
        f"the outputs of {call} require grad and carry a graph ({type(outputs.grad_fn).__name__}): model.eval() does "
        "not switch off gradient recording; compute the outputs inside torch.no_grad()",
        "eval-disables-grad",
    )
    expect(
        saved[0] == 0,
        f"{call} recorded a graph: autograd saved {saved[0]} tensors for a backward pass that never comes. Detaching "
        "the outputs afterwards does not undo that; compute them inside torch.no_grad()",
        "evaluation-without-no-grad",
    )
    if model.training:
        expect_back_in_evaluation(call, outputs, expected, switches)
    expect_close(
        outputs,
        expected,
        f"the outputs of {call} are not the evaluation-mode outputs"
        ": call model.eval(), then compute model(inputs) inside torch.no_grad()",
        rtol=1e-9,
        atol=1e-12,
    )


def expect_back_in_evaluation(call, outputs, expected, switches):
    """Why a model is in training mode after the call: switched back after computing, before it, or never left."""
    expect(
        not torch.allclose(outputs.to(expected.dtype), expected, rtol=1e-9, atol=1e-12),
        f"{call} computed the evaluation-mode outputs, then put the model back in training mode"
        ": leave the model in evaluation mode when you return (no model.train() after computing)",
    )
    expect(
        False not in switches,
        f"{call} called model.eval() but switched back to training mode before computing the outputs, so dropout "
        "dropped activations and batch norm used the batch statistics"
        ": call model.eval(), compute the outputs, and return with the model still in evaluation mode",
    )
    expect(
        False,
        f"after {call} the model is still in training mode, so dropout dropped activations and batch norm used the "
        "batch statistics; torch.no_grad() does not change module behaviour, model.eval() does"
        "; call model.eval() before computing the outputs",
        "no-grad-disables-dropout",
    )


check_evaluation("Linear + Dropout", checks.dropout_model, 4, 5, 1)
print(
    "Checked a Linear + Dropout model handed over in training mode, on 4 rows: outputs without a graph (no tensor "
    "saved), the model left in evaluation mode, dropout off. The grader also tests a model with batch norm."
)

### BEGIN HIDDEN TESTS
for case in (("Linear + Dropout", checks.dropout_model, 8, 5, 30), ("Linear + BatchNorm + Dropout", checks.batchnorm_model, 6, 4, 31)):
    check_evaluation(*case)
### END HIDDEN TESTS

# %% [markdown] md_forward_backward
# ## 10 · Forward builds, backward consumes
#
# It is tempting to think of the forward pass as writing a receipt that backward later reads.
# As a record of *where each value came from* the picture works: every non-leaf knows the
# operation that produced it. What it leaves out is that a graph is made of two things whose
# lifetimes differ:
#
# * the **`grad_fn` nodes**, which exist as long as some tensor still points at them;
# * the **tensors those nodes saved**, which a plain `backward()` releases as it uses them.
#
# Two consequences follow. Setting `.grad` back to `None` brings no released tensor back, so a
# consumed graph stays unusable for a second walk; and `retain_graph=True` keeps the saved
# tensors but leaves `.grad` alone, so the next backward adds on top of what is already there.

# %% [markdown] task task_compile_blindly points=0
# ### Written answer B (2 points, graded by a TA)
#
# A teammate wants to wrap every model in `torch.compile` by default, "because it is
# faster". In a few sentences, give at least three distinct reasons why compiling blindly can
# lose time or cause trouble, and say what you would measure before deciding.
#
# === BEGIN MARK SCHEME ===
#
# Marking (2 points; half points allowed):
#
# * **1 point, three or more distinct reasons** among: short runs or tiny models never
#   amortise the compilation cost; first-call compilation latency (plus recompilation when a
#   guard fails); unstable or dynamic input shapes trigger recompiles; graph breaks on
#   unsupported Python constructs split the program and reduce the gain (`fullgraph=True`
#   turns them into errors instead); debugging gets harder, and hooks, prints or logging can
#   change what is captured; data-dependent control flow needs explicit care. Half a point
#   for two.
# * **1 point, the measurement:** keep an eager reference and compare outputs and gradients
#   within tolerances; time the first (compiling) call separately from steady-state steps,
#   over a representative mix of shapes; decide from those numbers, since no speed-up is
#   promised. Half a point for only one of the two (the eager comparison of outputs and
#   gradients, or the separate timing of the first call), or for timing that mixes the first
#   call into the average. A claim of a guaranteed speed-up loses this point.
#
# === END MARK SCHEME ===

# %% [markdown] answer answer_compile_blindly points=2
# Compilation is opt-in for good reasons. A short run or a small model may never pay back the
# first-call compilation time; guards that fail trigger recompilation, and inputs whose shapes
# keep changing make that frequent; unsupported Python constructs cause graph breaks, so only
# pieces get optimised (fullgraph=True raises instead); and hooks, prints or a debugger change
# what is captured and make failures harder to trace.
#
# Before deciding I would keep the eager model as a reference, check outputs and gradients
# agree within tolerance, and time the first call separately from steady-state steps over a
# realistic mix of input shapes.

# %% [markdown] md_retention
# ## 11 · Six answers to keep
#
# Say each one in your own words before you read it.
#
# 1. **What gets recorded.** With grad mode on (the default), PyTorch records the operations it
#    can differentiate whenever an input requires grad. A non-leaf keeps its `.grad` only after
#    `retain_grad()`. Scaling a tensor first and calling `requires_grad_()` afterwards is a correct
#    way to make a leaf, not a silent failure.
# 2. **The hand example.** With $x = 2$, $w = 3$, $b = 1$ and target 5 the loss is 4, with
#    $dw = 8$ and $db = 4$.
# 3. **Reading failures.** A `.grad` of `None` comes from non-leaves and from parameters the loss
#    never touched; gradients that are never cleared pile up and can grow or change direction;
#    loss tensors kept for a log keep memory alive. Explain the mechanism, not only the symptom.
# 4. **VJPs.** $dX = G W^\top$ and $dW = X^\top G$, and nothing needs the dense flattened
#    Jacobian. "Backward costs about twice the forward" is a count for this affine map, not a
#    promise for every program.
# 5. **Compiling.** Compiled code is checked against its eager version, outputs and gradients,
#    within tolerances you state (section 7.5). When compiling pays off at all is yours to argue
#    in written answer B.
# 6. **The MNIST rewrite.** Sections 4 to 6 gave raw leaves, a forward pass, cross entropy,
#    SGD under no-grad, selection on a validation split and an adapter for local arrays. The
#    checks ran them on a synthetic contract; they make no claim about accuracy on real digits.
#
# To make it stick: tomorrow, draw the hand-example graph and the VJP shapes again without
# looking; in a week, rerun the failure cases of section 8 and explain why each ends as it does.
# The next lesson packs these parameters and operations into `nn.Module`.
