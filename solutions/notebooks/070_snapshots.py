# %% [markdown] snapshots_intro
# # 7 · item, detach, clone and data
#
# Training code is full of moments where a value leaves the derivative machinery: a loss goes
# into a log, a parameter is saved as the best so far, a metric becomes a NumPy array. Four
# tools do this, and they differ in two independent ways: **does the result still take part in
# autograd?** and **does it have its own memory, or does it look at the original's?**
#
# | expression | tracked by autograd? | own memory? |
# |---|---|---|
# | `t.clone()` | yes, when `t` is tracked (its `grad_fn` is a clone node) | yes |
# | `t.detach()` | no | no: same storage as `t` |
# | `t.data` | no | no, and it does not even share `t`'s version counter |
# | `t.item()` | no: it is a plain Python number | yes: a plain Python number |
#
# The two columns are independent questions, and the tools can be chained, so any combination of
# answers is within reach.
#
# In this notebook you will
#
# 1. take independent snapshots of tensors,
# 2. log losses in a training loop without keeping their graphs alive,
# 3. copy values to NumPy safely and read single values with `.item()`,
# 4. update parameters in a way that autograd can still see.
#
# **How to work.** Run the setup cell first. Each exercise has an answer cell whose body
# raises `NotImplementedError`: replace those lines with your code, run the cell, then run the
# check cell under it. The visible check tests what the exercise states on the page's own example;
# the grader runs further tests on other inputs, and a failed test names the misconception it
# recognised.

# %% snapshots_setup
import functools
import math

import numpy as np
import torch

import autograd_checks as checks
from autograd_checks import COMMON_ERRORS, call_answer, expect, expect_close, expect_tensor, in_kernel, may_change_in_place, quiet, seeded

# One thread and explicit generators keep every result identical from run to run.
torch.set_num_threads(1)

# %% [markdown] md_tensor_snapshot
# ## Sharing memory versus sharing history
#
# Take the leaf `x = torch.tensor([2., 3.], requires_grad=True)` and make three relatives of it:
#
# * `x.clone()` gets new memory (its `data_ptr()` differs from `x`'s) but stays in the graph:
#   its `grad_fn` is not `None`, so gradients can still flow from the copy back to `x`.
# * `x.detach()` is cut out of the graph (`requires_grad` is `False`) but it is a second view of
#   the very same memory: its `data_ptr()` equals `x`'s. Write `8` into its element 0 under
#   `torch.no_grad()` and `x[0]` becomes `8` as well.
# * Neither of them alone is a safe snapshot: one is still in the graph, the other shares memory.
#   A copy that is out of the graph *and* owns its memory, taken before that write, would still
#   hold `2` in element 0. Building one is Exercise 1.
#
# `torch.no_grad()` only stops *new* operations from being recorded inside the block; it does not
# detach tensors that already exist. The cell below replays the first two facts.

# %% demo snapshots_demo_relatives
x = torch.tensor([2.0, 3.0], requires_grad=True)
copy_in_graph = x.clone()
same_memory = x.detach()
print("clone:  own memory:", copy_in_graph.data_ptr() != x.data_ptr(), "| grad_fn:", type(copy_in_graph.grad_fn).__name__)
print("detach: own memory:", same_memory.data_ptr() != x.data_ptr(), "| requires_grad:", same_memory.requires_grad)
with torch.no_grad():
    same_memory[0] = 8
print("after writing 8 through the detached view: x[0] =", x[0].item())

# %% [markdown] md_tensor_snapshot_exercise
# ### Exercise 1 (3 points)
#
# Write `tensor_snapshot(tensor)`: return a copy of `tensor` that autograd does not track
# (`requires_grad` is `False`, no `grad_fn`) and that owns its memory, so that changing `tensor` in
# place afterwards leaves the copy untouched. The grader changes the original after calling your
# function and checks that your copy did not move; it also checks that the copy is not part of
# any graph.

# %% answer answer_tensor_snapshot
from solutions.reference.snapshots import tensor_snapshot

# %% test test_tensor_snapshot points=3 targets=detach-copies-storage,clone-cuts-graph,numpy-conversion-copies-data,data-attribute-is-safe
x = torch.tensor([2.0, 3.0], requires_grad=True)
may_change_in_place(x)  # the check changes x beside your code after your copy is taken
copy = call_answer(tensor_snapshot, x)
shown = "tensor_snapshot(x) for the page's x = [2., 3.]"
expect_tensor(copy, shown, shape=(2,))
expect(
    copy.dtype == x.dtype,
    f"{shown} has dtype {copy.dtype} instead of x's {x.dtype}"
    ": keep x's dtype (copy it without converting)",
)
expect(
    copy.grad_fn is None and not copy.requires_grad,
    f"{shown} is still tracked (grad_fn {type(copy.grad_fn).__name__}, requires_grad {copy.requires_grad}): "
    "clone() copies the memory but keeps the copy in the graph"
    "; call detach() before clone() to cut it from the graph as well",
    "clone-cuts-graph",
)
shared = copy.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
in_kernel(checks.changed_in_place, x)
if shared:
    expect(
        copy._version != x._version,
        f"{shown} shares memory with x (the same storage), so changing x in place changed it too: "
        "detach() cuts the graph but keeps the same memory"
        "; call clone() after detach() to give the copy its own memory",
        "detach-copies-storage",
    )
    expect(
        not in_kernel(checks.rewrapped_memory, copy, x),
        f"{shown} is a new tensor around x's own memory: .numpy() shares x's memory and torch.from_numpy() "
        "(or torch.as_tensor) shares the array's, so no step of the trip copied and changing x changed your copy too"
        "; use x.detach().clone() instead",
        "numpy-conversion-copies-data",
    )
    expect(
        False,
        f"{shown} shares memory with x but not its version counter: that is what .data returns, "
        "a view of x's memory that autograd cannot even watch; use x.detach().clone() instead",
        "data-attribute-is-safe",
    )
expect(
    copy.tolist() == [2.0, 3.0],
    f"{shown} no longer holds 2 and 3 after x was changed in place"
    ": return x.detach().clone(), a copy with memory of its own",
)
print(
    "Checked on the page's example x = [2., 3.]: shape, dtype, not tracked, own memory (x changed in place "
    "afterwards, the copy kept 2 and 3). The grader also tests other shapes and a tensor that is not a leaf."
)

### BEGIN HIDDEN TESTS
def shares_memory(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def originals():
    for seed, shape in ((10, (3,)), (11, (2, 4)), (12, ())):
        yield f"a leaf of shape {shape}", torch.randn(shape, dtype=torch.float64, generator=seeded(seed)).requires_grad_()
    leaf = torch.randn(4, dtype=torch.float64, generator=seeded(13)).requires_grad_()
    yield "a non-leaf (2 * leaf)", in_kernel(checks.doubled, leaf)  # its graph is built beside your code


for what, original in originals():
    may_change_in_place(original)  # change_in_place changes it beside your code; `before` is the copy compared
    before = torch.tensor(original.tolist(), dtype=torch.float64)
    copy = call_answer(tensor_snapshot, original)
    shown = f"tensor_snapshot(x) for x = {what}"
    expect_tensor(copy, shown, shape=original.shape)
    expect(
        copy.dtype == original.dtype,
        f"{shown} has dtype {copy.dtype} instead of {original.dtype}"
        ": keep x's dtype (copy it without converting)",
    )
    expect(
        copy.grad_fn is None and not copy.requires_grad,
        f"{shown} is still tracked (grad_fn {type(copy.grad_fn).__name__}, requires_grad {copy.requires_grad}): "
        "clone() copies the memory but keeps the copy in the graph"
        "; call detach() before clone() to cut it from the graph as well",
        "clone-cuts-graph",
    )
    shared = shares_memory(copy, original)
    in_kernel(checks.changed_in_place, original)
    if shared:
        expect(
            copy._version != original._version,
            f"{shown} shares memory with x (same storage pointer), so changing x in place changed it too: "
            "detach() cuts the graph but keeps the same memory"
            "; call clone() after detach() to give the copy its own memory",
            "detach-copies-storage",
        )
        expect(
            not in_kernel(checks.rewrapped_memory, copy, original),
            f"{shown} is a new tensor around x's own memory: .numpy() shares x's memory and torch.from_numpy() "
            "(or torch.as_tensor) shares the array's, so no step of the trip copied and changing x changed your copy"
            " too; use x.detach().clone() instead",
            "numpy-conversion-copies-data",
        )
        expect(
            False,
            f"{shown} shares memory with x but not its version counter (x is at version {original._version}, "
            f"your copy at {copy._version}): that is what .data returns, a view autograd cannot even watch"
            "; use x.detach().clone() instead",
            "data-attribute-is-safe",
        )
    expect_close(
        copy,
        before,
        f"{shown} changed when x was changed in place afterwards"
        ": return x.detach().clone(), a copy with memory of its own",
    )
### END HIDDEN TESTS

# %% [markdown] md_descend_and_log
# ## Logging losses without keeping graphs
#
# Every loss computed in grad mode is the last node of a graph: its `grad_fn` links back through
# the operations that produced it. Looking at such a loss (printing or formatting it) is harmless,
# because nothing holds on to it afterwards. Keeping it is not: a list of loss tensors, or a running
# total that is itself tracked, holds one chain of graph nodes per step. How much memory that pins
# down varies, since `backward()` may already have released the activations those nodes saved, but
# it grows with every step, and a log never needs any of it.
#
# So a log entry should carry the value and nothing else. A Python number (`loss.item()`) does
# that, and so does a tensor cut out of its graph (`loss.detach()`): both are fine, numbers are not
# the only safe choice. On a GPU, reading a value back to the CPU makes the host wait for the
# device; if profiling shows that this costs time, keep running totals on the device and read them
# less often.
#
# ### Exercise 2 (3 points)
#
# Write `descend_and_log(w, loss_fn, lr, steps)`. `w` is a float64 leaf that requires grad and
# arrives without a gradient (`w.grad is None`), and `loss_fn(w)` returns a one-element tensor. Run `steps` steps of gradient descent on `w`. How
# you update and how you keep one step's gradient out of the next is yours to choose, within
# three rules: `w` is changed in place and autograd can see each change (its version counter
# moves), no update is recorded in a graph, and when you return `w` holds no gradient
# (`w.grad is None`). Return the list of the losses you logged, one per step (the loss before
# that step's update), as numbers or as tensors that carry no graph. The grader checks the
# values against the closed-form path of gradient descent on quadratic losses, and checks that
# nothing you logged still belongs to a graph.

# %% answer answer_descend_and_log
from solutions.reference.snapshots import descend_and_log

# %% test test_descend_and_log points=3 targets=logged-loss-keeps-graph,data-attribute-is-safe,backward-overwrites-grad,zero-fill-same-as-none,rebinding-updates-parameter
w = torch.tensor([1.0, -1.0], dtype=torch.float64, requires_grad=True)
may_change_in_place(w)  # descend_and_log updates it where your code runs
version = w._version
logged = call_answer(descend_and_log, w, checks.sum_of_squares, 0.1, 3)
shown = "descend_and_log(w, sum of squares, lr=0.1, steps=3) from w = [1., -1.]"
expect(
    isinstance(logged, list),
    f"{shown} should return a list, got {type(logged).__name__}"
    ": return a list of the logged losses",
)
expect(len(logged) == 3, f"{shown} should log 3 losses, got {len(logged)}: log one loss per step, steps in all")
for step, value in enumerate(logged):
    if isinstance(value, torch.Tensor):
        expect(
            value.grad_fn is None and not value.requires_grad,
            f"{shown}: the loss logged at step {step} is a tensor that still holds its graph "
            f"(grad_fn {type(value.grad_fn).__name__}); log a value without its graph",
            "logged-loss-keeps-graph",
        )
        expect(
            value.numel() == 1,
            f"{shown}: the value logged at step {step} has {value.numel()} elements, not one"
            ": log the one-element loss of that step (its .item())",
        )
    else:
        expect(
            isinstance(value, (int, float)),
            f"{shown}: the value logged at step {step} is a {type(value).__name__}"
            ": log each loss as a Python float (.item()) or a tensor that keeps no graph",
        )
# Never cleared, w.grad holds the sum of every step's gradient, and each step moves w by lr times that sum.
stale, moving, total = [], torch.tensor([1.0, -1.0], dtype=torch.float64), torch.zeros(2, dtype=torch.float64)
for _ in range(3):
    stale.append(float((moving * moving).sum()))
    total += 2 * moving
    moving = moving - 0.1 * total
expect(
    not all(math.isclose(float(value), kept, rel_tol=1e-9) for value, kept in zip(logged, stale)),
    f"{shown}: the losses logged are {[float(value) for value in logged]}, those of steps that each used the sum "
    "of all gradients so far: backward() adds into w.grad, so set w.grad = None after each update",
    "backward-overwrites-grad",
)
# By hand: loss = sum(w**2) = 2, and each step multiplies w by 1 - 2 * 0.1 = 0.8.
for step, (value, expected) in enumerate(zip(logged, (2.0, 1.28, 0.8192))):
    expect(
        math.isclose(float(value), expected, rel_tol=1e-12),
        f"{shown}: the loss logged at step {step} is {float(value)!r}, but gradient descent gives {expected}"
        ": log each step's loss before that step's update, and update w by lr times that step's gradient only",
    )
expect(
    w.tolist() != [1.0, -1.0],
    f"after {shown}, the caller's w is still [1., -1.]: the updates went to new tensors bound to the name w"
    "; update w itself in place under torch.no_grad() (w -= lr * w.grad)",
    "rebinding-updates-parameter",
)
expect(
    w._version >= version + 3,
    f"{shown} changed w but its version counter moved only {w._version - version} times in 3 steps: "
    "an update written through .data is hidden from autograd"
    "; update w itself in place under torch.no_grad() (w -= lr * w.grad)",
    "data-attribute-is-safe",
)
expect(
    w.grad is None or torch.count_nonzero(w.grad).item() != 0,
    f"after {shown}, w.grad should be None, got zeros {w.grad.tolist() if w.grad is not None else ''}: a "
    "zero-filled gradient is not None, and an optimizer would still process it; set w.grad = None after each update",
    "zero-fill-same-as-none",
)
expect(
    w.grad is None,
    f"after {shown}, w.grad should be None, got {None if w.grad is None else w.grad.tolist()}"
    ": set w.grad = None after each update",
)
print(
    "Checked on w = [1., -1.] with the sum of squares: three losses (2, 1.28, 0.8192) without a graph, the "
    "version counter moved, w.grad is None. The grader also tests other losses, rates and step counts."
)

### BEGIN HIDDEN TESTS
def closed_form(start, target, scale, lr, steps):
    """Losses and final point of gradient descent on sum(scale * (w - target)**2), without autograd."""
    gap = start - target
    losses = []
    for _ in range(steps):
        losses.append(float((scale * gap * gap).sum()))
        gap = (1 - 2 * lr * scale) * gap
    return torch.tensor(losses, dtype=torch.float64), target + gap


for seed, size, lr, steps in ((20, 3, 0.1, 5), (21, 1, 0.05, 4), (22, 4, 0.2, 6)):
    generator = seeded(seed)
    start = torch.randn(size, dtype=torch.float64, generator=generator)
    target = torch.randn(size, dtype=torch.float64, generator=generator)
    scale = torch.rand(size, dtype=torch.float64, generator=generator) + 0.5
    loss_fn = functools.partial(checks.scaled_squared_distance, target, scale)  # sum(scale * (p - target)**2)
    w = start.clone().requires_grad_()
    may_change_in_place(w)  # the expected values come from start, which stays read-only
    pointer, version = w.data_ptr(), w._version
    logged = call_answer(descend_and_log, w, loss_fn, lr, steps)
    shown = f"descend_and_log(w, loss_fn, lr={lr}, steps={steps})"
    expect(
        isinstance(logged, list) and len(logged) == steps,
        f"{shown} should return a list of {steps} logged losses"
        ": return a list with one logged loss per step",
    )
    for step, value in enumerate(logged):
        if isinstance(value, torch.Tensor):
            expect(
                value.grad_fn is None and not value.requires_grad,
                f"{shown}: the loss logged at step {step} is a tensor that still holds its graph "
                f"(grad_fn {type(value.grad_fn).__name__}); log loss.item() or loss.detach()",
                "logged-loss-keeps-graph",
            )
            expect(
                value.numel() == 1,
                f"{shown}: the value logged at step {step} has {value.numel()} elements, not one"
                ": log the one-element loss of that step (its .item())",
            )
        else:
            expect(
                isinstance(value, (int, float)),
                f"{shown}: the value logged at step {step} is a {type(value).__name__}"
                ": log each loss as a Python float (.item()) or a tensor that keeps no graph",
            )
    expected_losses, expected_end = closed_form(start, target, scale, lr, steps)
    numbers = torch.tensor([float(value) for value in logged], dtype=torch.float64)
    expect_close(
        numbers,
        expected_losses,
        f"{shown} logged losses that do not follow gradient descent"
        ": log each step's loss before that step's update, and update w by lr times that step's gradient only",
        rtol=1e-10,
        atol=1e-12,
    )
    expect(
        w.is_leaf and w.requires_grad and w.data_ptr() == pointer,
        f"{shown} must update w in place: it should stay the same leaf"
        ": update it with w -= lr * w.grad under torch.no_grad()",
    )
    expect(
        w._version >= version + steps,
        f"{shown} changed w's values but its version counter moved only {w._version - version} times in {steps} steps: "
        "an update written through .data is hidden from autograd"
        "; update w itself in place under torch.no_grad() (w -= lr * w.grad)",
        "data-attribute-is-safe",
    )
    expect(
        w.grad is None,
        f"after {shown}, w.grad should be None, got {None if w.grad is None else w.grad.tolist()}"
        ": set w.grad = None after each update",
    )
    expect_close(
        w,
        expected_end,
        f"after {shown}, w is not where {steps} descent steps lead"
        ": update w by lr times that step's gradient only, once per step",
        rtol=1e-10,
        atol=1e-12,
    )
### END HIDDEN TESTS

# %% [markdown] md_numpy_snapshot
# ## Host copies and single numbers
#
# NumPy knows nothing about autograd, so handing it a tensor has a few rules:
#
# * `.numpy()` refuses a tensor that requires grad: the values have to leave the graph first.
# * It only works on tensors in CPU memory; a tensor on a GPU has to be brought to the host
#   before (and that transfer makes the CPU wait for the device, one more reason to do it rarely).
# * For a CPU tensor it does **not** copy: the array it returns is a view of the tensor's own
#   memory. Change the tensor in place later and the array shows the change.
#
# So an array that must keep the values of *this* moment needs memory of its own, and there is
# more than one place in the chain where you can make that copy. Exercise 3 asks for such an array.
#
# A single value, read as a plain Python number, is what `.item()` gives you. Which shapes it
# accepts, and whether indexing first (`t[0]`) is a good idea, is for you to try in Exercise 4.
#
# ### Exercise 3 (2 points)
#
# Write `numpy_snapshot(tensor)`: from a CPU tensor (which may require grad) return a NumPy
# array with its current values, shape and dtype, which keeps those values when the tensor is
# changed in place later.

# %% answer answer_numpy_snapshot
from solutions.reference.snapshots import numpy_snapshot

# %% test test_numpy_snapshot points=2 targets=numpy-conversion-copies-data,numpy-on-tracked-tensor
NUMPY_ERRORS = (
    (
        "on Tensor that requires grad",
        "numpy-on-tracked-tensor",
        "numpy() refuses a tensor that requires grad: the values must leave the graph first, and the array "
        "you return must still have memory of its own; call detach() first, then .numpy(), then .copy()",
    ),
) + COMMON_ERRORS

x = torch.tensor([2.0, 3.0], requires_grad=True)
array = call_answer(numpy_snapshot, x, known_errors=NUMPY_ERRORS)
shown = "numpy_snapshot(x) for x = [2., 3.] (float32, requires grad)"
expect(
    isinstance(array, np.ndarray),
    f"{shown} should return a numpy.ndarray, got {type(array).__name__}"
    ": return tensor.detach().numpy().copy()",
)
expect(
    array.shape == (2,) and array.dtype == np.float32,
    f"{shown} has shape {array.shape} and dtype {array.dtype}"
    ": keep the tensor's shape and its float dtype (convert nothing)",
)
expect(
    not np.shares_memory(array, x.detach().numpy()),
    f"{shown} shares memory with x: .numpy() on a CPU tensor wraps the same storage, so later in-place "
    "changes to x would show in it; call .copy() on the array",
    "numpy-conversion-copies-data",
)
expect(
    array.tolist() == [2.0, 3.0],
    f"{shown} holds {array.tolist()} instead of [2.0, 3.0]"
    ": return an array of the tensor's current values (tensor.detach().numpy().copy())",
)
print(
    "Checked on x = [2., 3.]: an array of shape (2,), dtype float32, the values 2 and 3, memory of its own. "
    "The grader also tests other shapes and dtypes and changes x afterwards."
)

### BEGIN HIDDEN TESTS
for seed, shape, dtype, numpy_dtype in ((30, (4,), torch.float64, np.float64), (31, (2, 3), torch.float32, np.float32), (32, (), torch.float64, np.float64)):
    x = torch.randn(shape, dtype=dtype, generator=seeded(seed)).requires_grad_()
    before = np.array(x.tolist(), dtype=numpy_dtype)
    array = call_answer(numpy_snapshot, x, known_errors=NUMPY_ERRORS)
    shown = f"numpy_snapshot(x) for a {dtype} tensor of shape {shape}"
    expect(
        isinstance(array, np.ndarray),
        f"{shown} should return a numpy.ndarray, got {type(array).__name__}"
        ": return tensor.detach().numpy().copy()",
    )
    expect(
        array.shape == tuple(shape) and array.dtype == numpy_dtype,
        f"{shown} has shape {array.shape} and dtype {array.dtype}"
        ": keep the tensor's shape and its float dtype (convert nothing)",
    )
    expect(
        not np.shares_memory(array, x.detach().numpy()),
        f"{shown} shares memory with x: .numpy() on a CPU tensor wraps the same storage, so later in-place changes to x would show in it"
        "; call .copy() on the array",
        "numpy-conversion-copies-data",
    )
    with torch.no_grad():
        x.mul_(-3).add_(7)
    expect(
        np.array_equal(array, before),
        f"{shown} changed after x was changed in place"
        ": return a copy with memory of its own (.copy() on the array)",
    )
### END HIDDEN TESTS

# %% [markdown] md_one_element_value
# ### Exercise 4 (2 points)
#
# Write `one_element_value(tensor)`: `tensor` is a floating tensor (`float16`, `bfloat16`,
# `float32` or `float64`) with exactly one element, of any shape (for instance `()`, `(1,)` or
# `(1, 1, 1)`), which may require grad. Return its value as a Python `float`, exactly as the
# tensor holds it.

# %% answer answer_one_element_value
from solutions.reference.snapshots import one_element_value

# %% test test_one_element_value points=2 targets=index-before-item,numpy-holds-every-dtype,results-rounded-for-display
ITEM_ERRORS = (
    (
        "invalid index of a 0-dim tensor",
        "index-before-item",
        "a tensor of shape () has no element [0]; .item() needs no index for any one-element shape"
        ": call .item() on the tensor itself",
    ),
    (
        "unsupported ScalarType",
        "numpy-holds-every-dtype",
        "NumPy has no bfloat16, so a bfloat16 tensor cannot go through .numpy() or np.asarray; .item() gives a "
        "Python float for every floating dtype and every one-element shape: call .item() on the tensor",
    ),
) + COMMON_ERRORS



def expect_not_rounded(value, held, shown):
    """Fail, naming the rounding, when `value` is `held` rounded to a few decimals."""
    rounded = value != held and any(value == round(held, digits) for digits in range(13))
    expect(
        not rounded,
        f"{shown} returned {value!r}, the value {held!r} rounded: return the number the tensor holds, "
        "tensor.item(), and round only what you print",
        "results-rounded-for-display",
    )


for shape in ((), (1,), (1, 1, 1)):  # the shapes the exercise names
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):  # and its floating dtypes
        value = call_answer(one_element_value, torch.full(shape, 3.0, dtype=dtype), known_errors=ITEM_ERRORS)
        shown = f"one_element_value(t) for t = 3.0 of shape {shape} and dtype {dtype}"
        expect(
            isinstance(value, float),
            f"{shown} should return a Python float, got {checks.type_name(value)}"
            ": return tensor.item()",
        )
        expect(
            value == 3.0,
            f"{shown} returned {value!r} instead of 3.0"
            ": return tensor.item(), which reads the one element whatever the shape",
        )
print(
    "Checked on 3.0 in the shapes (), (1,) and (1, 1, 1), each as float16, bfloat16, float32 and float64: a "
    "Python float equal to 3.0. The grader also tests other values and tensors that require grad."
)

### BEGIN HIDDEN TESTS
def exactly_held(seed, significant_bits):
    """A seeded number with `significant_bits` binary digits: the half-precision kinds hold it exactly."""
    generator = seeded(seed)
    mantissa = int(torch.randint(2 ** (significant_bits - 1), 2**significant_bits, (), generator=generator))
    exponent = int(torch.randint(-4, 4, (), generator=generator))
    sign = 1 if int(torch.randint(0, 2, (), generator=generator)) else -1
    return math.ldexp(sign * mantissa, exponent - significant_bits)


# Every floating dtype the exercise names, in each of its shapes. float16 keeps 11 significant bits and
# bfloat16 8, so their numbers are drawn with exactly those digits; the expected value is that number.
half_precision = (
    (43, (1, 1, 1), torch.float16, True, 11),
    (44, (), torch.float16, False, 11),
    (45, (), torch.bfloat16, True, 8),
    (46, (1,), torch.bfloat16, False, 8),
    (47, (1, 1, 1), torch.bfloat16, True, 8),
)
for seed, shape, dtype, tracked, bits in half_precision:
    number = exactly_held(seed, bits)
    tensor = torch.full(shape, number, dtype=dtype, requires_grad=tracked)
    value = call_answer(one_element_value, tensor, known_errors=ITEM_ERRORS)
    shown = f"one_element_value(t) for t of shape {shape} and dtype {dtype}"
    expect(
        isinstance(value, float),
        f"{shown} should return a Python float, got {checks.type_name(value)}"
        ": return tensor.item()",
    )
    expect_not_rounded(value, number, shown)
    expect(
        value == number,
        f"{shown} returned {value!r} instead of {number!r}, the value the tensor holds"
        ": return tensor.item(), which reads the one element whatever the shape",
    )
for seed, shape, dtype, tracked in ((33, (), torch.float64, False), (34, (1, 1, 1), torch.float32, True), (35, (1,), torch.float64, True), (36, (), torch.float32, True), (37, (1, 1), torch.float64, False)):
    number = torch.randn((), dtype=torch.float64, generator=seeded(seed)).item()
    tensor = torch.full(shape, number, dtype=dtype, requires_grad=tracked)
    expected = float(np.asarray(number, dtype=np.float32 if dtype == torch.float32 else np.float64))
    value = call_answer(one_element_value, tensor, known_errors=ITEM_ERRORS)
    shown = f"one_element_value(t) for t of shape {shape} and dtype {dtype}"
    expect(
        isinstance(value, float),
        f"{shown} should return a Python float, got {checks.type_name(value)}"
        ": return tensor.item()",
    )
    expect_not_rounded(value, expected, shown)
    expect(
        value == expected,
        f"{shown} returned {value!r} instead of {expected!r}"
        ": return tensor.item(), which reads the one element whatever the shape",
    )
### END HIDDEN TESTS

# %% [markdown] md_versioned_update
# ## Why updates do not go through `.data`
#
# Every tensor has a **version counter**, a number that each in-place change to it increases. An
# operation that keeps a tensor for its backward step (in `z = x * w` the gradient for `w` is `x`,
# so the product keeps `x`) also notes the counter's value at that moment. When `backward()`
# reaches that node it compares the two. If the counter has moved, the kept values are not the
# ones the forward pass used, and autograd stops with an error that mentions an *inplace
# operation* instead of returning a wrong gradient. An update inside `torch.no_grad()` is left out
# of every graph, but it still increases the counter, so this check still sees it; that is why
# backpropagating again through a retained graph after the parameters were updated is unsafe.
#
# `.data` predates this mechanism. It returns a tensor on the same memory whose counter is
# separate from the original's. A write through it changes the numbers while every counter that
# autograd looks at stays the same, so an outdated graph runs without complaint and mixes the new
# values into an old computation. PyTorch keeps count with version counters because they are
# cheap; other ways of detecting mutation are imaginable, but this is the one it relies on. The cell
# below tries both kinds of update.

# %% demo snapshots_demo_data
def gradient_of_w_after_changing_x(through_data):
    x = torch.tensor(2.0, requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    z = x * w  # saves x: dz/dw = x
    if through_data:
        x.data.add_(1)
    else:
        with torch.no_grad():
            x.add_(1)
    try:
        z.backward()
    except RuntimeError as error:
        return "backward refused: " + ("inplace operation" if "inplace operation" in str(error) else "other error")
    return f"backward ran, w.grad = {w.grad.item()} (the forward pass used x = 2)"


print("in place under no_grad:", gradient_of_w_after_changing_x(through_data=False))
print("through .data:         ", gradient_of_w_after_changing_x(through_data=True))

# %% [markdown] md_versioned_update_exercise
# ### Exercise 5 (3 points)
#
# Write `versioned_update(params, lr)`: for every leaf `p` in the list `params` (each has a
# `.grad`), apply `p <- p - lr * p.grad` in place, without recording the update in a graph and
# without hiding it from autograd. Unlike `sgd_step` in section 5, leave every `p.grad` as it was
# (here the caller resets the gradients). Return `None`. The grader builds `z = (x * w).sum()`, runs
# `backward(retain_graph=True)`, calls your update on `[x, w]`, checks the new values and that
# the version counters moved, and then checks that a second `backward()` through the old graph
# is refused.

# %% answer answer_versioned_update
from solutions.reference.snapshots import versioned_update

# %% test test_versioned_update points=3 targets=data-attribute-is-safe,inplace-leaf-in-grad-mode,rebinding-updates-parameter
x = torch.tensor([2.0, 3.0], dtype=torch.float64, requires_grad=True)
x.grad = torch.ones(2, dtype=torch.float64)
may_change_in_place(x)  # versioned_update updates it where your code runs
version = x._version
# Here PyTorch's refusal of an in-place change to a leaf means the update ran in grad mode.
VERSIONED_ERRORS = (
    ("a leaf Variable", "inplace-leaf-in-grad-mode",
     "a parameter was changed in place while autograd was recording; do the update inside torch.no_grad()"),
) + COMMON_ERRORS
result = call_answer(versioned_update, [x], 0.5, known_errors=VERSIONED_ERRORS)
shown = "versioned_update([x], 0.5) for x = [2., 3.] with x.grad = [1., 1.]"
expect(
    result is None,
    f"{shown} should return None, got {type(result).__name__}"
    ": change the tensors in place and return nothing",
)
expect(
    x.is_leaf and x.requires_grad,
    f"after {shown}, x should still be a leaf that requires grad"
    ": update it in place (p -= lr * p.grad) under torch.no_grad()",
)
expect(
    x.tolist() != [2.0, 3.0] or x._version != version,
    f"after {shown}, x is still [2.0, 3.0]: a new tensor was put in the list's place (or bound to a name), "
    "and the caller's x never changed; update each p in place (p -= lr * p.grad) under torch.no_grad()",
    "rebinding-updates-parameter",
)
expect(
    x.tolist() == [1.5, 2.5],
    f"after {shown}, x is {x.tolist()} instead of x - 0.5 * x.grad = [1.5, 2.5]"
    ": update each p in place by lr times its own .grad",
)
expect(
    x.grad is not None and x.grad.tolist() == [1.0, 1.0],
    f"after {shown}, x.grad should be left as it was (the caller resets it), got "
    f"{None if x.grad is None else x.grad.tolist()}: leave .grad alone",
)
expect(
    x._version > version,
    f"{shown} changed the values but not the version counter: writing through .data hides the update from autograd"
    "; update p itself (p -= lr * p.grad) under torch.no_grad()",
    "data-attribute-is-safe",
)
print(
    "Checked on x = [2., 3.]: None returned, x is still a leaf, x becomes [1.5, 2.5], x.grad is kept, the "
    "version counter moved. The grader also tests that backward through an old graph is refused."
)

### BEGIN HIDDEN TESTS
for seed, lr in ((40, 0.1), (41, 0.03)):
    generator = seeded(seed)
    x0 = torch.randn(3, dtype=torch.float64, generator=generator)
    w0 = torch.randn(3, dtype=torch.float64, generator=generator)
    x = x0.clone().requires_grad_()
    w = w0.clone().requires_grad_()
    may_change_in_place(x, w)  # the expected values come from x0 and w0
    z = (x * w).sum()  # saves x and w for backward
    z.backward(retain_graph=True)  # x.grad = w0, w.grad = x0
    pointers, versions = (x.data_ptr(), w.data_ptr()), (x._version, w._version)
    call_answer(versioned_update, [x, w], lr)
    shown = f"versioned_update([x, w], lr={lr})"
    for name, p, gradient in (("x", x, w0), ("w", w, x0)):
        expect(
            isinstance(p.grad, torch.Tensor) and torch.equal(p.grad, gradient),
            f"after {shown}, {name}.grad should be left as it was (the caller resets it), got "
            f"{None if p.grad is None else p.grad.tolist()}: leave .grad alone",
        )
    expect(
        x.is_leaf and w.is_leaf and x.requires_grad and w.requires_grad,
        f"after {shown}, x and w must still be leaves that require grad"
        ": update them in place (p -= lr * p.grad) under torch.no_grad()",
    )
    expect(
        (x.data_ptr(), w.data_ptr()) == pointers,
        f"{shown} replaced x or w by new tensors instead of updating them in place"
        ": update each p in place (p -= lr * p.grad) under torch.no_grad()",
    )
    # One float64 multiply and subtract: only a fused multiply-add may differ, in the last bit.
    expect_close(
        x,
        x0 - lr * w0,
        f"after {shown}, x is not x - lr * x.grad"
        ": update each p in place by lr times its own .grad",
        rtol=1e-15,
        atol=0,
    )
    expect_close(
        w,
        w0 - lr * x0,
        f"after {shown}, w is not w - lr * w.grad"
        ": update each p in place by lr times its own .grad",
        rtol=1e-15,
        atol=0,
    )
    expect(
        x._version > versions[0] and w._version > versions[1],
        f"{shown} changed the values but not the version counters (x stays at version {x._version}): "
        "writing through .data hides the update from autograd"
        "; update p itself (p -= lr * p.grad) under torch.no_grad()",
        "data-attribute-is-safe",
    )
    x.grad = None
    w.grad = None
    try:
        with quiet():
            z.backward()
    except RuntimeError as error:
        expect(
            "inplace operation" in str(error),
            f"backward through the old graph failed for another reason: {error}"
            "; update each p in place (p -= lr * p.grad) under torch.no_grad() and change nothing else",
        )
    else:
        expect(
            False,
            f"after {shown}, backward through the old graph ran silently and gave w.grad = {w.grad.tolist()}, "
            f"computed from the updated x rather than the x of the forward pass {x0.tolist()}"
            "; update p itself (p -= lr * p.grad) under torch.no_grad()",
            "data-attribute-is-safe",
        )
### END HIDDEN TESTS

# %% [markdown] snapshots_summary
# ## Summary
#
# * Four scopes, four tools: a whole block of code that needs no graph runs under
#   `torch.no_grad()`; a single tensor is cut from its history with `detach()`; a value that
#   leaves for a log or a plot goes through `.item()` or a host copy; and `clone()` is the answer
#   wherever two tensors sharing memory would be a problem.
# * A "best parameters so far" copy needs neither a history nor shared memory; the tools above
#   chain, so one expression can give both. `.item()` reads any one-element tensor, whatever
#   its shape.
# * A log keeps values, not graphs: Python numbers or detached tensors.
# * Parameters are updated in place inside `torch.no_grad()`, where the version counter still
#   sees the change; `.data` hides it and is not for updates.
#
# Next: section 7.5 compares compiled code with its eager reference.
