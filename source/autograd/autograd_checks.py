"""Checks shared by the test cells of every notebook in this problem set.

A failed check raises `Diagnosis`: an AssertionError whose message says what
went wrong in the student's terms and, when the failure matches a known
misconception, names it as ``[misconception: <id>]``. The grading tools read
that tag back from the graded notebooks, so keep its format stable.

Warnings raised while a check runs are recorded instead of printed: nbgrader
gives a test cell zero for any output on stderr, and a PyTorch warning is not
a student's mistake in itself.
"""
import contextlib
import functools
import importlib
import os
import sysconfig
import traceback
import warnings

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

MISCONCEPTION_TAG = "[misconception: {}]"


class Diagnosis(AssertionError):
    """A failed check, worded for the student, naming the misconception behind it.

    IPython shows `_render_traceback_` instead of a full traceback, so the
    output names the problem without echoing the grader's own test code.
    """

    def __init__(self, message, misconception=None, detail=()):
        self.misconception = misconception
        self.detail = tuple(detail)
        if misconception:
            message = MISCONCEPTION_TAG.format(misconception) + " " + message
        super().__init__(message)

    def _render_traceback_(self):
        return [*self.detail, f"{type(self).__name__}: {self}"]


def expect(condition, message, misconception=None):
    """Fail with `message` (and the misconception it reveals) unless `condition` holds."""
    if not condition:
        raise Diagnosis(message, misconception)


def type_name(value):
    """The exact name of `value`'s type: bare for Python's own types, with its module otherwise.

    NumPy 2 names its boolean scalar "bool", so the bare name alone would tell a student who
    returned one that a bool is not a bool.
    """
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def expect_python_bool(value, shown):
    """Fail unless `value` is a Python bool, naming the type it has instead."""
    truth_value = type_name(value).startswith("numpy.") or isinstance(value, torch.Tensor)
    expect(
        isinstance(value, bool),
        f"{shown} should return a Python bool (True or False), got {type_name(value)}: return True or False"
        + (" (bool(...) turns it into one)" if truth_value else ""),
    )


@contextlib.contextmanager
def quiet():
    """Record warnings raised inside the block instead of writing them to stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


# Errors PyTorch raises for a known mistake: (short stable substring, misconception, what happened).
COMMON_ERRORS = (
    (
        "scalar outputs",
        "vector-backward-without-cotangent",
        "backward() was called with no argument on an output with more than one element: call backward() "
        "on the one-element result the exercise asks for, or pass backward() a tensor of weights shaped "
        "like the output (section 2.1 names it the cotangent)",
    ),
    (
        "does not require grad",
        "grad-on-by-default",
        "backward() found no tensor that requires grad: the input was never marked with requires_grad"
        "; call requires_grad_() on the input (or build it with requires_grad=True) before computing from it",
    ),
    (
        "can require gradients",
        "numpy-default-dtype",
        "an integer tensor was asked to require grad; torch.tensor makes int64 from Python ints"
        ": build it from floats, or with dtype=torch.float64, before it requires grad",
    ),
)


def run_in_student_process(function, args, kwargs):
    """Call `function` where the student's code runs: here, this same process.

    Sealed grading replaces this function in the grader's copy of the module:
    the call then runs in the student's kernel and only data comes back.
    """
    return function(*args, **kwargs)


def allow_changes_in_student_process(tensors):
    """Nothing to allow while the student's code runs in this process.

    Sealed grading replaces this function in the grader's copy of the module,
    as it replaces run_in_student_process.
    """


# The tensors a test declared with may_change_in_place: call_answer does not hold them to their first values.
_MAY_CHANGE = []
# Inputs larger than this (a dataset, say) are watched by their version counter alone, which every
# in-place operation moves: a copy of their values would cost more than the check itself.
_COPIED_ELEMENTS = 2**20


def may_change_in_place(*tensors):
    """Declare tensors of the test that the code beside the student's may change in place.

    These are what an exercise hands over to be updated: the parameters of an
    update step, or a tensor a step of the test changes beside the student's
    code. Under sealed grading every other tensor the test makes is read-only
    to the student's kernel (its `.grad` aside): a change made there is
    refused and flags the submission. Take expected values from copies made
    before the call, never from a tensor declared here.
    """
    _MAY_CHANGE.extend(tensors)
    allow_changes_in_student_process(tensors)


def in_kernel(function, *args, **kwargs):
    """Run a step of a test beside the student's code (a graph or an object an answer receives).

    `function` must hold no expected value: under sealed grading it runs in the
    student's kernel, and what it returns comes back as data.
    """
    return run_in_student_process(function, args, kwargs)


def beside_student(factory, *args, **kwargs):
    """A context manager that wraps the student's code where it runs.

    With grading in this process it is `factory(*args, **kwargs)` itself; under
    sealed grading it is entered and left in the student's kernel, and the
    value it yields comes back as data (a list stays in step after each call).
    """
    return _BesideStudent(factory, args, kwargs)


class _BesideStudent:
    def __init__(self, factory, args, kwargs):
        self._opened = (factory, args, kwargs)
        self._context = None

    def __enter__(self):
        self._context, value = in_kernel(_enter_context, *self._opened)
        return value

    def __exit__(self, kind, error, trace):
        in_kernel(_exit_context, self._context, kind is not None)
        return False


def _enter_context(factory, args, kwargs):
    context = factory(*args, **dict(kwargs))
    return context, context.__enter__()


def _exit_context(context, failed):
    if failed:  # the block failed on the grader's side; the context sees a failure too
        context.__exit__(RuntimeError, RuntimeError("the check around this block failed"), None)
    else:
        context.__exit__(None, None, None)


def _around_student_code(factory):
    """Mark a context manager of this module as one that wraps the student's code (see beside_student)."""
    @functools.wraps(factory)
    def opened(*args, **kwargs):
        return beside_student(factory, *args, **kwargs)

    return opened


class InputChanged(Exception):
    """Sealed grading raises it here when the student's code changed a tensor the call handed it.

    Its text says what changed ("requires_grad", "values"); call_answer words it for the student.
    """


def call_answer(function, *args, known_errors=COMMON_ERRORS, **kwargs):
    """Call a student's function with warnings kept off stderr.

    An error raised inside it becomes a Diagnosis that shows the student's own
    frames only; when its text contains a substring of `known_errors`, the
    diagnosis names that misconception. Substrings are short phrases PyTorch
    has kept stable across 2.x releases. A tensor the call hands over must come
    back as it went (its `.grad` aside, and those declared with may_change_in_place).
    """
    name = getattr(function, "__name__", "your function")
    handed = _handed_tensors((args, kwargs))
    with quiet():
        try:
            result = run_in_student_process(function, args, kwargs)
        except Diagnosis:
            raise
        except InputChanged as changed:
            raise _input_changed(name, str(changed)) from None
        except NotImplementedError:
            raise Diagnosis(f"{name} is not written yet: it still raises NotImplementedError"
            ": replace that line with your code, then run the cell again") from None
        except Exception as error:  # the student's code may raise anything
            raise _answer_error(name, error, known_errors) from None
    changed = _changes(handed)
    if changed:
        raise _input_changed(name, changed)
    return result


def _input_changed(name, what):
    return Diagnosis(
        f"{name} changed the {what} of a tensor it was handed: leave the inputs as they came "
        "(if you need a tensor of your own to change, make one with .detach().clone())",
        "changes-a-handed-input",
    )


def _handed_tensors(value, depth=3):
    """(tensor, what it was) for each tensor in the call's arguments, in lists and dicts too."""
    if isinstance(value, torch.Tensor):
        if any(value is allowed for allowed in _MAY_CHANGE):
            return []
        copy = value.detach().clone() if value.numel() <= _COPIED_ELEMENTS else None
        return [(value, (value.requires_grad, value._version, copy))]
    if depth == 0:
        return []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return [pair for item in items for pair in _handed_tensors(item, depth - 1)]


def _changes(handed):
    changed = {}
    for tensor, (requires_grad, version, values) in handed:
        if tensor.requires_grad != requires_grad:
            changed["requires_grad"] = True
        if values is None:
            if tensor._version != version:
                changed["values"] = True
            continue
        after = tensor.detach()
        if after.shape != values.shape or after.dtype != values.dtype or not _equal_with_nans(after, values):
            changed["values"] = True
    return " and ".join(changed)


def _equal_with_nans(after, before):
    if after.is_floating_point() or after.is_complex():
        return bool(torch.isclose(after, before, rtol=0, atol=0, equal_nan=True).all())
    return bool(torch.equal(after, before))


def _answer_error(name, error, known_errors):
    text = str(error).strip()
    summary = text.splitlines()[0] if text else ""
    frames = _student_traceback(error)
    raised = f"{name} raised {type(error).__name__}: {summary}"
    for substring, misconception, message in known_errors:
        if substring in text:
            return Diagnosis(f"{message} ({raised})", misconception, detail=frames)
    return Diagnosis(raised, None, detail=frames)


# Frames inside installed libraries (torch, numpy) and the standard library say nothing to a student.
_LIBRARY_DIRS = tuple(
    {os.path.realpath(sysconfig.get_paths()[key]) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")}
)
# Nor do the frames of this module (the call that carries the answer to where it runs): they are the kit's.
_THIS_FILE = os.path.realpath(__file__)


def _shown_to_student(frame):
    path = os.path.realpath(frame.filename)
    return path != _THIS_FILE and not path.startswith(_LIBRARY_DIRS)


def _student_traceback(error):
    """The traceback from the student's function down, without library frames, ending in the error line.

    An error rebuilt from the student's kernel (sealed grading) has no frames
    here: its type and message are all that crossed.
    """
    if getattr(error, "raised_in_student_process", False):
        return traceback.format_exception_only(type(error), error)
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if _shown_to_student(frame)]
    return [
        "Traceback (most recent call last):\n",
        *traceback.format_list(frames),
        *traceback.format_exception_only(type(error), error),
    ]


# A tensor subclass can redefine what comparing it means; the checks accept only these.
PLAIN_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)


def expect_tensor(value, what, shape=None):
    """Fail unless `value` is a plain tensor (of `shape`, when given)."""
    expect(
        isinstance(value, torch.Tensor),
        f"{what} should be a torch.Tensor, got {type(value).__name__}: return a torch.Tensor, as the exercise asks",
    )
    expect(
        type(value) in PLAIN_TENSOR_TYPES,
        f"{what} should be a plain torch.Tensor, not the subclass {type(value).__name__}"
        ": return a plain tensor, as PyTorch's own operations make it",
    )
    if shape is not None:
        expect(
            tuple(value.shape) == tuple(shape),
            f"{what} should have shape {tuple(shape)}, got {tuple(value.shape)}"
            ": return a tensor of that shape (print the shape of each step to see where it changes)",
        )


def expect_close(actual, expected, message, misconception=None, rtol=1e-7, atol=1e-9):
    """Compare two tensors in float64 with explicit tolerances."""
    expect_tensor(actual, "the result")
    actual64 = actual.detach().to(torch.float64)
    # Plain Python numbers go straight to float64: a detour through float32 would lose digits.
    if isinstance(expected, torch.Tensor):
        expected64 = expected.detach().to(torch.float64)
    else:
        expected64 = torch.as_tensor(expected, dtype=torch.float64)
    expect(
        actual64.shape == expected64.shape,
        f"{message}: shape {tuple(actual64.shape)} instead of {tuple(expected64.shape)}",
        misconception,
    )
    try:
        torch.testing.assert_close(actual64, expected64, rtol=rtol, atol=atol)
    except AssertionError:
        gap = (actual64 - expected64).abs().max().item()
        raise Diagnosis(f"{message} (largest difference {gap:.3g})", misconception) from None


def apart(found, expected):
    """Two numbers as text, with as few significant digits (6 to 17) as show them different.

    For messages: "0.1849 expected 0.1849" tells a student nothing, while
    "0.18490000069141388 expected 0.1849" shows a float32 detour.
    """
    for digits in range(6, 18):
        shown = (f"{float(found):.{digits}g}", f"{float(expected):.{digits}g}")
        if shown[0] != shown[1]:
            return shown
    return repr(float(found)), repr(float(expected))


def seeded(seed):
    """A private random generator, so no check depends on global random state."""
    return torch.Generator().manual_seed(seed)


def central_difference(function, point, step=1e-6):
    """Gradient of a scalar function at `point` by central differences, in float64.

    It never calls autograd, so it is an independent reference for the answers.
    """
    point = torch.as_tensor(point, dtype=torch.float64).detach()
    gradient = torch.zeros_like(point)
    flat = gradient.view(-1)
    for index in range(point.numel()):
        shift = torch.zeros_like(point).view(-1)
        shift[index] = step
        shift = shift.view_as(point)
        with torch.no_grad():
            upper = float(function(point + shift))
            lower = float(function(point - shift))
        flat[index] = (upper - lower) / (2 * step)
    return gradient


# --- Helpers added for notebook 060_training -------------------------------


def raised_by(function, *args, **kwargs):
    """Call a student's function that should raise; return the exception it raised, or None if it returned.

    Warnings are recorded, not printed. The caller checks the exception's type.
    """
    with quiet():
        try:
            run_in_student_process(function, args, kwargs)
        except Exception as error:  # the student's code may raise anything
            return error
    return None


@_around_student_code
@contextlib.contextmanager
def standing_in(function, **replacements):
    """Run the block with global names of `function`'s module replaced, then restore them.

    A decorated function is followed through its `__wrapped__` chain: the
    globals of every function along it are patched, the wrapped one's too.

    A student's function looks up its helpers (raw_forward, raw_metrics, ...) by
    name when it runs; the grader's small stand-ins let one exercise be graded
    without depending on the student's answers to the others.
    """
    missing = object()
    saved = []  # (namespace, {name: what it held}), restored in reverse order
    try:
        for namespace in _globals_along_wrapped_chain(function):
            saved.append((namespace, {name: namespace.get(name, missing) for name in replacements}))
            namespace.update(replacements)
        yield
    finally:
        for namespace, held in reversed(saved):
            for name, value in held.items():
                if value is missing:
                    namespace.pop(name, None)
                else:
                    namespace[name] = value


def _globals_along_wrapped_chain(function, limit=100):
    """Every distinct globals dict of `function` and of the functions it wraps (functools.wraps' `__wrapped__`).

    A decorated answer (`@torch.no_grad()` over `def raw_metrics`) is a
    wrapper from another module; the code that looks the helpers up is the
    wrapped function's, so its globals are the ones that count.
    """
    found, seen = [], set()
    for _ in range(limit):  # a chain of wrappers that loops ends here
        namespace = getattr(function, "__globals__", None)
        if isinstance(namespace, dict) and id(namespace) not in seen:
            seen.add(id(namespace))
            found.append(namespace)
        function = getattr(function, "__wrapped__", None)
        if function is None:
            break
    return found


@_around_student_code
@contextlib.contextmanager
def counting_saved_tensors():
    """Count the tensors autograd saves for a backward pass inside the block.

    Autograd saves tensors only while it records a graph, so a count of zero
    means the block ran without building one (no_grad, inference mode, or no
    input requiring grad). Yields a one-element list holding the count.
    """
    count = [0]

    def pack(tensor):
        count[0] += 1
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        yield count


# --- What the tests hand to the student's code, and how a forged fact shows -----------------
#
# Under sealed grading no function of a hidden test reaches the student's kernel:
# whatever must run beside the student's code is defined here, in this public
# module, and a test passes it by name with data only. What these functions
# report comes from the student's process, so each one also reports the act
# that would forge it, and the test turns that report into a Forgery.


class Forgery(Diagnosis):
    """A fact the student's process reported was forged: the cell scores zero and the grader flags it."""

    forged = True


BACKWARD, BY_HAND = "backward", "by hand"  # how a gradient reached a hook


def leaf_noting_deliveries(value, deliveries):
    """A float64 leaf holding `value` whose hook notes in `deliveries` each gradient handed to it.

    Each entry is (BACKWARD, gradient) when the autograd engine was running a
    backward pass as the hook was called, and (BY_HAND, gradient) otherwise.
    """
    leaf = torch.as_tensor(value, dtype=torch.float64).detach().clone().requires_grad_()
    leaf.register_hook(functools.partial(_note_delivery, deliveries))
    return leaf


def _note_delivery(deliveries, grad):
    # The engine gives each backward pass a task id; outside one the id is -1.
    how = BACKWARD if torch._C._current_graph_task_id() >= 0 else BY_HAND
    deliveries.append((how, grad.detach().clone()))


def gradients_from_backward(deliveries, what):
    """The gradients backward passes handed to a leaf of `leaf_noting_deliveries`; Forgery if any came by hand."""
    forged = [
        entry for entry in deliveries
        if not (isinstance(entry, tuple) and len(entry) == 2 and entry[0] == BACKWARD)
    ]
    if forged:
        raise Forgery(
            f"{what}: a gradient reached x's hook outside any backward pass (the hook was called by hand, "
            "or its record was written over); that forges a delivery backward() never made"
        )
    return [grad for _, grad in deliveries]


@_around_student_code
@contextlib.contextmanager
def noting_retain_grad(retained):
    """Note in `retained` every tensor on which retain_grad() is called inside the block."""
    original = torch.Tensor.__dict__.get("retain_grad")

    def retain_grad(tensor):
        retained.append(tensor)
        return torch._C.TensorBase.retain_grad(tensor)

    torch.Tensor.retain_grad = retain_grad
    try:
        yield retained
    finally:
        if original is None:
            del torch.Tensor.retain_grad
        else:
            torch.Tensor.retain_grad = original


@_around_student_code
@contextlib.contextmanager
def noting_backward_passes(passes):
    """Note in `passes` the id of each backward pass that ran an operation inside the block.

    A gradient that reached some tensor but not the one asked about tells a cut
    path (detach(), torch.no_grad()) from a derivative written by hand.
    """
    with _BackwardWatch(passes):
        yield passes


class _BackwardWatch(TorchDispatchMode):
    """Notes the autograd engine's task id of every operation that runs inside a backward pass."""

    def __init__(self, passes):
        super().__init__()
        self.passes = passes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        task = torch._C._current_graph_task_id()  # -1 outside a backward pass
        if task >= 0 and task not in self.passes:
            self.passes.append(task)
        return func(*args, **(kwargs or {}))


def stored_gradients(tensors):
    """The `.grad` of each tensor, read where their graph lives."""
    with quiet():
        return [tensor.grad for tensor in tensors]


MATRIX_PRODUCTS = frozenset({"mm", "bmm", "addmm", "baddbmm", "matmul", "mv", "addmv", "dot"})


def call_watched(function, *args, limit=None, **kwargs):
    """Call a student's function with every tensor operation it runs watched; returns (result, watched).

    `watched` is data: "over" names the first operation that made a tensor of
    more than `limit` elements (None if none did, and the call is stopped
    there, before a dense Jacobian can use much memory), "products" counts the
    matrix products, and "popped" says whether the student's code took the
    watch off torch's stack of dispatch modes. Judge it with `expect_within`.
    """
    watched_call = functools.partial(_call_under_watch, function, limit)
    watched_call.__name__ = getattr(function, "__name__", "your function")
    return call_answer(watched_call, *args, **kwargs)


def expect_within(watched, limit_message, misconception=None):
    """Forgery if the watch was taken off while the student's code ran; Diagnosis if it saw the limit passed."""
    if watched["popped"]:
        raise Forgery(
            "the code took the grader's watch off torch's stack of dispatch modes while it ran, "
            "so the operations it ran there went unseen"
        )
    if watched["over"] is not None:
        raise Diagnosis(f"{limit_message} ({watched['over']})", misconception)


class _OverLimit(Exception):
    """Stops the student's code at the first operation past the limit."""


def _call_under_watch(function, limit, *args, **kwargs):
    from torch.utils import _python_dispatch as dispatch

    watch = _OperationWatch(limit)
    real_pop = dispatch._pop_torch_dispatch_stack
    depth = torch._C._len_torch_dispatch_stack()
    watch.__enter__()
    try:
        with _noting_pops(watch, dispatch, real_pop):
            try:
                result = function(*args, **kwargs)
            except Exception:
                if watch.over is None:
                    raise
                result = None  # stopped by the watch, whatever the code made of that
    finally:
        left = torch._C._len_torch_dispatch_stack()
        if left != depth + 1 or torch._C._get_dispatch_stack_at(depth) is not watch:
            watch.popped = True
        while torch._C._len_torch_dispatch_stack() > depth:
            real_pop(None)
    return result, {"over": watch.over, "products": watch.products, "popped": watch.popped}


@contextlib.contextmanager
def _noting_pops(watch, dispatch, real_pop):
    """While the block runs, a pop of torch's dispatch-mode stack marks the watch as popped."""

    def noted_pop(*args):
        watch.popped = True
        return real_pop(*args)

    real_c_pop = torch._C._pop_torch_dispatch_stack
    dispatch._pop_torch_dispatch_stack = torch._C._pop_torch_dispatch_stack = noted_pop
    try:
        yield
    finally:
        dispatch._pop_torch_dispatch_stack = real_pop
        torch._C._pop_torch_dispatch_stack = real_c_pop


class _OperationWatch(TorchDispatchMode):
    """Counts matrix products and stops at the first tensor of more than `limit` elements."""

    def __init__(self, limit):
        super().__init__()
        self.limit, self.over, self.products, self.popped = limit, None, 0, False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if str(func).split(".")[1] in MATRIX_PRODUCTS:
            self.products += 1
        out = func(*args, **(kwargs or {}))
        for value in tree_flatten(out)[0]:
            if self.limit is not None and isinstance(value, torch.Tensor) and value.numel() > self.limit:
                self.over = self.over or f"{func} made a tensor of shape {tuple(value.shape)}"
                raise _OverLimit(self.over)
        return out


# --- Functions the tests pass to answers, and what they build beside the student's code -----
#
# Public on purpose: a test refers to them by name, so no test code has to
# travel to the student's kernel. What they compute (the expected values) stays
# in the hidden tests.


def noting_calls(function, calls, t):
    """`function(t)`, noting in `calls` whether autograd could record this call."""
    calls.append(isinstance(t, torch.Tensor) and t.requires_grad and torch.is_grad_enabled())
    return function(t)


def noting_calls_and_grad_mode(function, calls, grad_modes, t):
    """`noting_calls`, also noting in `grad_modes` whether grad mode was on (to tell no_grad from an untracked input)."""
    grad_modes.append(torch.is_grad_enabled())
    return noting_calls(function, calls, t)


def sum_of_squares(t):
    return (t * t).sum()


def product_of_sines(t):
    return torch.sin(t).prod()


def exp_of_first_times_cube_of_second(t):
    return torch.exp(t[0]) * t[1] ** 3


def euclidean_norm(t):
    return (t @ t).sqrt()


def halved_sum(t):
    return (t * 0.5).sum()


def squared(t):
    return t * t


def matrix_times(matrix, t):
    return matrix @ t


def sines_product_exp(t):
    """Three outputs of a 3-vector: the sum of sines, the product of the first two entries, exp of the third."""
    return torch.stack([t.sin().sum(), t[0] * t[1], t[2].exp()])


def gram(t):
    return t @ t.T


def sine_times_running_sum(t):
    return t.sin() * t.cumsum(0)


def grad_none_situations():
    """Tensors whose `.grad` is None, each in its own situation: (key, tensor, output, backward_ran)."""
    gen = seeded(30)
    situations = []

    a = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    spare = torch.tensor(-2.0, dtype=torch.float64, requires_grad=True)
    loss = a.exp() * 2
    loss.backward()
    situations.append(("spare-parameter", spare, loss, True))

    base = torch.randn(4, dtype=torch.float64, generator=gen, requires_grad=True)
    weight = base * 0.01
    loss = (weight * 3).sum()
    loss.backward()
    situations.append(("scaled-weight", weight, loss, True))

    p = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        loss = (p.sin() * 4).sum()
    situations.append(("loss-under-no-grad", p, loss, False))

    k = torch.tensor([1.5, -0.5], dtype=torch.float64, requires_grad=True)
    readings = torch.tensor([0.25, 2.0], dtype=torch.float64)
    loss = (readings.exp() * 3).sum()  # grad mode, but built only from tensors that do not require grad
    situations.append(("loss-of-untracked-tensors", k, loss, False))

    x = torch.tensor(2.0, dtype=torch.float64)
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    loss = (w * x + 1.0 - 5.0) ** 2
    loss.backward()
    situations.append(("data-input", x, loss, True))

    r = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    r_bias = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    loss = (r * r).sum() + r_bias
    loss.backward()
    with torch.no_grad():
        for param in (r, r_bias):
            param -= 0.1 * param.grad
            param.grad = None
    situations.append(("after-sgd-step", r, loss, True))

    q = torch.randn(3, dtype=torch.float64, generator=gen, requires_grad=True)
    other = torch.randn(3, dtype=torch.float64, generator=gen, requires_grad=True)
    loss = ((q.tanh() * other).exp() + other).pow(2).mean()
    situations.append(("deep-before-backward", q, loss, False))

    W = torch.randn(3, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    inputs = torch.randn(2, dtype=torch.float64, generator=gen)
    hidden = torch.tanh(W @ inputs)
    loss = (hidden**2).sum()
    loss.backward()
    situations.append(("hidden-activation", hidden, loss, True))

    m = torch.tensor([2.0, -1.0], dtype=torch.float64, requires_grad=True)
    n = torch.tensor([0.5, 0.25], dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        frozen = m * 2
    loss = (frozen * n).sum()
    loss.backward()
    situations.append(("frozen-under-no-grad", frozen, loss, True))

    c = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    d = torch.tensor(0.9, dtype=torch.float64, requires_grad=True)
    loss = c * c + 1
    situations.append(("unused-before-backward", d, loss, False))

    s = torch.randn(2, 2, dtype=torch.float64, generator=gen, requires_grad=True)
    loss = s.cos().sum()
    loss.backward()
    s.grad = None
    situations.append(("grad-set-to-none", s, loss, True))

    used = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    twin = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    loss = (used * used).sum()
    loss.backward()
    situations.append(("equal-twin", twin, loss, True))

    leaf_output = torch.tensor(1.25, dtype=torch.float64, requires_grad=True)
    bystander = torch.tensor(1.25, dtype=torch.float64, requires_grad=True)
    situations.append(("output-is-a-leaf", bystander, leaf_output, False))
    return situations


class StandInCalled(Exception):
    """Raised by `refuse_call`: the student's code called something a test had replaced."""


def refuse_call(*args, **kwargs):
    """A stand-in for a function the student's code must not call (autograd, for work done by hand)."""
    raise StandInCalled("a stand-in that refuses to be called was called")


@contextlib.contextmanager
def blaming_stand_ins(message, misconception=None):
    """Grader side: a call that failed because it called `refuse_call` fails with `message` instead."""
    try:
        yield
    except Diagnosis as failure:
        if StandInCalled.__name__ in str(failure):
            raise Diagnosis(message, misconception) from None
        raise


# --- Autograd refused while an answer works by hand, or in forward mode ---------------------
#
# "By hand" holds only when every route to a derivative is closed, and "forward
# mode" only when every reverse-mode route is. Each route is closed where torch
# looks it up when it is called: at its public name (torch.func.grad), so that
# the report names what the student wrote, and at the shared layer beneath it
# (torch.autograd.grad, the engine's run_backward, forward AD's dual level), so
# that a name bound before the block began (`from torch.func import grad`)
# reaches a stand-in too.

REVERSE_MODE, FORWARD_MODE = "reverse mode", "forward mode"
WRITTEN_OVER = "written over: "  # the note of a stand-in the student's code replaced

AUTOGRAD_ROUTES = {
    REVERSE_MODE: (
        # Tensor.backward() calls torch.autograd.backward; both it and grad run the engine
        # through _engine_run_backward, imported into two modules, which calls run_backward.
        "torch.autograd.backward",
        "torch.autograd.grad",
        "torch.autograd._engine_run_backward",
        "torch.autograd.graph._engine_run_backward",
        "torch.autograd.variable.Variable._execution_engine.run_backward",
        # torch.autograd.functional reaches grad through its own _autograd_grad; its jvp
        # differentiates a vector-Jacobian product once more (the double-backward trick).
        "torch.autograd.functional.vjp",
        "torch.autograd.functional.jvp",
        "torch.autograd.functional.vhp",
        "torch.autograd.functional.hvp",
        "torch.autograd.functional._autograd_grad",
        # torch.func's reverse transforms reach grad through eager_transforms._autograd_grad.
        "torch.func.grad",
        "torch.func.grad_and_value",
        "torch.func.vjp",
        "torch.func.jacrev",
        "torch._functorch.eager_transforms._autograd_grad",
    ),
    FORWARD_MODE: (
        # Dual tensors need a dual level: dual_level() enters one through enter_dual_level,
        # which asks predispatch for it; torch.func.jvp, jacfwd and linearize make duals too.
        "torch.autograd.forward_ad.dual_level",
        "torch.autograd.forward_ad.enter_dual_level",
        "torch.autograd.forward_ad.make_dual",
        "torch._functorch.predispatch._enter_dual_level",
        "torch.func.jvp",
        "torch.func.jacfwd",
        "torch.func.linearize",
    ),
}


class _RefusingEngine:
    """The autograd engine with run_backward replaced; everything else is the real engine's."""

    def __init__(self, engine, run_backward):
        self._engine = engine
        self.run_backward = run_backward

    def __getattr__(self, name):
        return getattr(self._engine, name)


def _refused_route(refused, route, *args, **kwargs):
    refused.append(route)
    raise StandInCalled(f"{route} was called where the exercise refuses it")


def route_slot(route):
    """Where a route is replaced: the module or class holding its last name, and that name.

    The engine is a C++ object whose run_backward cannot be replaced, so its
    route is replaced one step up, the engine itself in Variable._execution_engine.
    """
    if route.endswith(".run_backward"):
        route = route.rsplit(".", 1)[0]
    path, name = route.rsplit(".", 1)
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            owner = getattr(owner, attribute)
        return owner, name
    raise ImportError(f"no module holds {route}")


@_around_student_code
@contextlib.contextmanager
def refusing_autograd(modes=(REVERSE_MODE, FORWARD_MODE)):
    """Refuse every route into autograd of the given `modes` inside the block; yields the list of refusals.

    Each call of a refused route is noted by its dotted name and raises
    StandInCalled (which `blaming_stand_ins` words for the student); a stand-in
    the block's code replaced is noted as WRITTEN_OVER + its name. Everything
    is restored on leaving the block, whatever the code inside it raised.
    """
    with quiet():
        # Dynamo builds its table of torch's functions when first imported (torch.func
        # imports it on first use); built under the stand-ins, the table would fail.
        importlib.import_module("torch._dynamo")
    refused = []
    replaced = []
    try:
        for mode in modes:
            for route in AUTOGRAD_ROUTES[mode]:
                owner, name = route_slot(route)
                stand_in = functools.partial(_refused_route, refused, route)
                if route.endswith(".run_backward"):
                    stand_in = _RefusingEngine(getattr(owner, name), stand_in)
                replaced.append((route, owner, name, vars(owner)[name], stand_in))
                setattr(owner, name, stand_in)
        yield refused
    finally:
        for route, owner, name, original, stand_in in reversed(replaced):
            if vars(owner).get(name) is not stand_in:
                refused.append(WRITTEN_OVER + route)
            setattr(owner, name, original)


def refused_autograd_calls(refused, what):
    """Grader side: the routes `refusing_autograd` refused; Forgery if the code inside wrote over a stand-in."""
    forged = not isinstance(refused, list) or any(
        not isinstance(note, str) or note.startswith(WRITTEN_OVER) for note in refused
    )
    if forged:
        raise Forgery(
            f"{what}: autograd's stand-ins were written over while the answer ran "
            "(the grader puts them there to check a rule of the exercise); that hides the routes it took"
        )
    return refused


def square_loss_derivation(x, y, w, b, factor=2.0, db_sign=1.0, db_shift=0.0, dw_scale=1.0, absolute_loss=False):
    """Hand derivatives of L = (w*x + b - y)**2; the keyword arguments give the faulty ones a test needs."""
    err = w * x + b - y
    return {
        "loss": abs(err) if absolute_loss else err**2,
        "dw": factor * err * x * dw_scale,
        "db": db_sign * factor * err + db_shift,
    }


def lesson_numbers(x, y, w, b):
    """The lesson's worked values, whatever the point."""
    return {"loss": 4.0, "dw": 8.0, "db": 4.0}


def backward_with_cotangent(output, cotangent):
    """Backward from `output`, weighting its entries by `cotangent`."""
    (output * cotangent).sum().backward()


def squares_plus_sum(a, b):
    return (a * a).sum() + b.sum()


def squares_plus_weighted_sum(a, b, weights):
    return (a * a).sum() + (weights * b).sum()


def squared_distance(a, target):
    return ((a - target) ** 2).sum()


def squares_plus_cubes(a, b):
    return (a * a).sum() + (b**3).sum()


def linear_cross_entropy(W, b, X_batch, y_batch):
    return torch.nn.functional.cross_entropy(X_batch @ W + b, y_batch)


def noting_batch_rows(rows, loss_fn, X_batch, y_batch):
    """`loss_fn(X_batch, y_batch)`, noting in `rows` how many rows the batch has."""
    rows.append(len(y_batch))
    return loss_fn(X_batch, y_batch)


def counting_gradient_arrivals(params, arrivals):
    """Hooks counting in `arrivals[name]` the backward passes that accumulate a gradient into each parameter.

    A hook called outside a backward pass marks its count BY_HAND instead; `arrival_counts` reads them.
    """
    return [
        p.register_post_accumulate_grad_hook(functools.partial(_count_arrival, arrivals, name))
        for name, p in params.items()
    ]


def _count_arrival(arrivals, name, _):
    if torch._C._current_graph_task_id() >= 0 and isinstance(arrivals[name], int):
        arrivals[name] += 1
    else:
        arrivals[name] = BY_HAND


def arrival_counts(arrivals, what):
    """The counts of `counting_gradient_arrivals`; Forgery if a hook was called by hand or a count written over."""
    if not all(type(count) is int for count in arrivals.values()):
        raise Forgery(
            f"{what}: a parameter's gradient hook was called by hand, outside any backward pass, "
            "or its count was written over; that forges backward passes that never ran"
        )
    return arrivals


def noting_inputs(seen, function, t):
    """`function(t)`, noting `t` itself in `seen`."""
    seen.append(t)
    return function(t)


def linear_params(d, h=128, k=10, seed=0):
    """A linear model's parameters [W, b] in place of raw_params (h is ignored)."""
    W = (torch.randn(d, k, dtype=torch.float64, generator=seeded(seed)) * 0.1).requires_grad_()
    return [W, torch.zeros(k, dtype=torch.float64, requires_grad=True)]


def noting_params(created, d, h=128, k=10, seed=0):
    """Linear parameters of their own seeds, noting in `created` the arguments, the tensors and their start values."""
    W = (torch.randn(d, k, dtype=torch.float64, generator=seeded(100 + seed)) * 0.3).requires_grad_()
    b = (torch.randn(k, dtype=torch.float64, generator=seeded(200 + seed)) * 0.1).requires_grad_()
    created.append(((d, h, k, seed), [W, b], (W.detach().clone(), b.detach().clone())))
    return created[-1][1]


def linear_forward(X, params):
    W, b = params
    return X @ W + b


def noting_forward_rows(rows, X, params):
    """`linear_forward`, noting in `rows` how many rows each call receives."""
    rows.append(len(X))
    return linear_forward(X, params)


def constant_metrics(scores, X, y, params, bs=512):
    """In place of raw_metrics: always `scores`."""
    return tuple(scores)


def noting_metrics(scored, scores, X, y, params, bs=512):
    """In place of raw_metrics: notes (X, y, params) in `scored` and returns `scores`."""
    scored.append((X, y, params))
    return tuple(scores)


def scripted_metrics(Xv, script, snapshots, versions, other_scores, Xs, ys, params, bs=512):
    """In place of raw_metrics: on the validation set `Xv`, the next loss of `script` (the last one repeats).

    Notes a copy of the parameters and their lowest version for each validation
    score, and the size of every other set scored (with its true loss and accuracy).
    """
    with torch.no_grad():
        logits = Xs @ params[0] + params[1]
    if Xs.shape == Xv.shape and torch.equal(Xs, Xv):
        snapshots.append([p.detach().clone() for p in params])
        versions.append(min(p._version for p in params))
        return float(script[min(len(snapshots), len(script)) - 1]), 0.5
    other_scores.append(len(Xs))
    losses = torch.logsumexp(logits, dim=1) - logits[torch.arange(len(ys)), ys]
    return losses.mean().item(), (logits.argmax(dim=1) == ys).to(torch.float64).mean().item()


def no_training(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    """In place of raw_train: zero parameters, at once."""
    return [torch.zeros(784, 10, dtype=torch.float64)]


def noting_training(trained, params, X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    """In place of raw_train: notes the four sets in `trained` and returns `params`."""
    trained.append((X, y, Xv, yv))
    return params


def shifted_sum(t):
    return (t + 2).sum()


def sum_of_exp(t):
    return t.exp().sum()


def mean(t):
    return t.mean()


def sum_of_cubes(t):
    return (t**3).sum()


def first_minus_second(t):
    return t[0] - t[1]


def sum_of_negation(t):
    return (-t).sum()


def times_reversed_sum(t):
    return (t * t.flip(0)).sum()


def concatenation_sum(t):
    return torch.cat([t, t]).sum()


def fails_on_second_walk(t):
    """Saves nothing, so a second walk is allowed; a hook then fails it with an unrelated RuntimeError."""
    walks = []

    def hook(grad):
        walks.append(grad)
        if len(walks) > 1:
            raise RuntimeError("a hook failed on purpose on the second walk")
        return grad

    shifted = t + 1
    shifted.register_hook(hook)
    return shifted.sum()


def output_hook_allows_one_walk(t):
    """The page's (t + 2).sum() with a hook on the output that refuses a second walk with its own RuntimeError."""
    walks = []

    def hook(grad):
        walks.append(grad)
        if len(walks) > 1:
            raise RuntimeError("the output's hook allows one walk only")
        return grad

    total = (t + 2).sum()
    total.register_hook(hook)
    return total


def sine_of_product(a, b):
    return torch.sin(a @ b)


def tanh_of_product(a, b):
    return torch.tanh(a @ b)


def square_of_product(a, b):
    return (a @ b) ** 2


def doubled(t):
    return t * 2


def changed_in_place(tensor):
    """Change `tensor` in place where it lives, so that its version counter moves there."""
    with torch.no_grad():
        tensor.mul_(10).add_(1)


def rewrapped_memory(copy, original):
    """True when `copy` reads `original`'s memory through a storage object of its own.

    `.data`, `detach()` and views hand back the original's very storage; a trip out of torch and back
    (`torch.from_numpy(t.numpy())`, `torch.as_tensor`, DLPack) wraps the same bytes in a new one.
    """
    return copy.untyped_storage() is not original.untyped_storage()


def scaled_squared_distance(target, scale, p):
    return (scale * (p - target) ** 2).sum()


def cubed(t):
    return t**3


def sine_times_self(t):
    return torch.sin(t) * t


def minus_two(t):
    return t - 2


def noting_operands(seen, operation, x, w):
    """`operation(x, w)`, noting the pair (x, w) in `seen`."""
    seen.append((x, w))
    return operation(x, w)


def product(x, w):
    return x * w


def total(x, w):
    return x + w


def quotient(x, w):
    return x / w


def difference(x, w):
    return x - w


def square_plus(x, w):
    return x**2 + w


def sine_plus(x, w):
    return torch.sin(x) + w


def exp_times(x, w):
    return x.exp() * w


def shifted_product(x, w):
    return (x + 1) * w


def product_and_sum_stacked(x, w):
    return torch.stack([x * w, x + w])


def product_repeated(x, w):
    """The page's x * w as a vector of two equal entries: backward() has no cotangent for it."""
    return (x * w).repeat(2)


def tenth_then_triple(a):
    return (a * 0.1) * 3


def times_point_three(a):
    return a * 0.3


def tanh_plus_tiny(a):
    return torch.tanh(a) + 1e-12


def twice(a):
    return a * 2


def twice_stretched(a):
    """Twice `a`, off by a relative 1e-6."""
    return a * 2 * (1 + 1e-6)


def twice_shifted(a):
    """Twice `a`, off by an absolute 1e-6."""
    return a * 2 + 1e-6


def times_one(a):
    return a * 1.0


def overflowing_round_trip(a):
    """`a` scaled up by 1e37 and back: `a` again in float64, inf where the scaled value overflows a narrower dtype."""
    return (a * 1e37) / 1e37


def times_1_105(a):
    return a * 1.105


class _CubeWithWrongGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a**3

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 2 * a  # the true derivative is 3 * a**2


def _wrong_cube(a):
    return _CubeWithWrongGradient.apply(a)


def _doubled_sine(t):
    return torch.sin(t) * 2


def warm_up_compiler():
    """Compile one tiny function, forward and backward, so Dynamo's one-time start-up is paid at once.

    Run where the student's code runs: the checks themselves never compile.
    """
    with quiet():
        start = torch.ones(2, dtype=torch.float64, requires_grad=True)
        torch.compile(_doubled_sine, backend="aot_eager")(start).sum().backward()


def compiled_wrong_cube():
    """a**3 with a wrong backward (2a), compiled with aot_eager."""
    with quiet():
        return torch.compile(_wrong_cube, backend="aot_eager")


def sine_mix(a, b):
    return torch.sin(a) * b + a * b**2


def sine_mix_reordered(a, b):
    return a * (b * b) + b * torch.sin(a)


def scaled_sum(a, b):
    return a * b.sum()


def scaled_sum_half_b_gradient(a, b):
    """`scaled_sum` in value, with half the gradient for b."""
    return a * (b.detach().sum() + 0.5 * (b - b.detach()).sum())


def probed_inputs(seen):
    """An input that requires grad, and a function noting in `seen` (is_leaf, requires_grad, own memory) of what it receives."""
    original = torch.linspace(-1.0, 2.0, 4, dtype=torch.float64).requires_grad_()

    def probe(a):
        own_memory = a.untyped_storage().data_ptr() != original.untyped_storage().data_ptr()
        seen.append((a.is_leaf, a.requires_grad, own_memory))
        return a * 2

    return original, probe


def probes_of_each_side(seen):
    """An input that requires grad and two functions (eager, compiled) noting in `seen` the memory of what each receives.

    Each entry of `seen` is (side, storage address). The functions keep what
    they received alive until the next call of this function, so two copies
    made one after the other cannot share an address by reuse of freed memory.
    """
    original = torch.linspace(0.5, 1.5, 3, dtype=torch.float64).requires_grad_()
    _PROBED.clear()

    def probe_for(side):
        def probe(a):
            _PROBED.append(a)
            seen.append((side, a.untyped_storage().data_ptr()))
            return a * a

        return probe

    return original, probe_for("eager"), probe_for("compiled")


_PROBED: list = []  # what the probes of `probes_of_each_side` received


def manual_clock(calls, readings=None):
    """A clock that moves only when the function it comes with is called: 5 s the first time, 0.25 s after.

    Returns (clock, function); the function notes its inputs in `calls`, the
    clock its readings in `readings` when given.
    """

    class ManualClock:
        def __init__(self):
            self.now = 100.0

        def __call__(self):
            if readings is not None:
                readings.append(self.now)
            return self.now

    clock = ManualClock()

    def slow_first_call(a):
        clock.now += 5.0 if not calls else 0.25
        calls.append(a)
        return a * 2

    return clock, slow_first_call


COMPARISON_REPORT = "the comparison report"


def fixed_report(fn, compiled_fn, inputs, rtol, atol, **options):
    """In place of compare_compiled: always COMPARISON_REPORT."""
    return COMPARISON_REPORT


def noting_compare(recorded, fn, compiled_fn, inputs, rtol, atol, **options):
    """In place of compare_compiled: notes its arguments in `recorded`, returns COMPARISON_REPORT."""
    recorded.append({"fn": fn, "compiled_fn": compiled_fn, "inputs": inputs, "rtol": rtol, "atol": atol})
    return COMPARISON_REPORT


@_around_student_code
@contextlib.contextmanager
def watching_compile():
    """Note the backend of every torch.compile call made inside the block; yields the list of backends."""
    backends = []
    real_compile = torch.compile

    def recording_compile(model=None, **options):
        backends.append(options.get("backend", "inductor"))
        return real_compile(model, **options)

    torch.compile = recording_compile
    try:
        yield backends
    finally:
        torch.compile = real_compile


def softplus_mix(a, b):
    return torch.nn.functional.softplus(a) * b + torch.sin(a)


def itself(value):
    """`value` unchanged: through `in_kernel`, the object as it stands beside the student's code."""
    return value


def gradients_of_sum(out, leaves):
    return torch.autograd.grad(out.sum(), leaves)


def seeded_linear(n_in, n_out, seed):
    """A float64 nn.Linear whose weight and bias come from a private generator."""
    layer = torch.nn.utils.skip_init(torch.nn.Linear, n_in, n_out, dtype=torch.float64)
    generator = seeded(seed)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(n_out, n_in, dtype=torch.float64, generator=generator))
        layer.bias.copy_(torch.randn(n_out, dtype=torch.float64, generator=generator))
    return layer


def linear_then_dropout(n_in, n_out, seed, p):
    return torch.nn.Sequential(seeded_linear(n_in, n_out, seed), torch.nn.Dropout(p))


def dropout_model():
    """A Linear + Dropout model, and its evaluation-mode output as a function of the input."""
    first = seeded_linear(5, 3, seed=20)
    model = torch.nn.Sequential(first, torch.nn.Dropout(0.5))
    return model, functools.partial(_linear_output, first)


def noting_mode_switches(model, switches):
    """Note in `switches` each mode asked of `model` through train() or eval() (True for training)."""
    switch = model.train

    def noted(mode=True):
        switches.append(bool(mode))
        return switch(mode)

    model.train = noted  # eval() asks through self.train(False), so it is noted too


def _linear_output(layer, x):
    return x @ layer.weight.T + layer.bias


def batchnorm_model():
    """A Linear + BatchNorm + ReLU + Dropout + Linear model, and its evaluation-mode output as a function."""
    first, last = seeded_linear(4, 6, seed=21), seeded_linear(6, 2, seed=22)
    norm = torch.nn.BatchNorm1d(6, dtype=torch.float64)
    generator = seeded(23)
    with torch.no_grad():
        norm.running_mean.copy_(torch.randn(6, dtype=torch.float64, generator=generator))
        norm.running_var.copy_(torch.rand(6, dtype=torch.float64, generator=generator) + 0.5)
        norm.weight.copy_(torch.randn(6, dtype=torch.float64, generator=generator))
        norm.bias.copy_(torch.randn(6, dtype=torch.float64, generator=generator))
    model = torch.nn.Sequential(first, norm, torch.nn.ReLU(), torch.nn.Dropout(0.3), last)
    return model, functools.partial(_batchnorm_output, first, norm, last)


def _batchnorm_output(first, norm, last, x):
    hidden = x @ first.weight.T + first.bias
    hidden = (hidden - norm.running_mean) / torch.sqrt(norm.running_var + norm.eps) * norm.weight + norm.bias
    return torch.relu(hidden) @ last.weight.T + last.bias


# --- Inputs for the checks of stated precision, identity and tolerance rules ----------------


def storage_sharing_situations():
    """Leaves that share memory with a leaf of a graph but are other tensors: (key, tensor, output, backward_ran).

    A detach() of a used leaf, and a view of one, hold the very same memory as
    the tensor the graph recorded; autograd still gives them no gradient.
    """
    situations = []
    used = torch.tensor([0.75, -2.5, 1.0], dtype=torch.float64, requires_grad=True)
    loss = (used * used).sum()
    loss.backward()
    same_memory = used.detach().requires_grad_()
    situations.append(("detached-twin", same_memory, loss, True))

    weights = torch.tensor([1.5, 0.25, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
    loss = (weights.sin() * 3).sum()
    window = weights.detach()[1:].requires_grad_()  # the same storage, one element further on
    situations.append(("view-twin", window, loss, False))
    return situations


def stated_numbers(loss, dw, db, x, y, w, b):
    """A hand derivation that reports the given numbers at any point."""
    return {"loss": loss, "dw": dw, "db": db}


# The sealed pre-check, for a student's own kernel on the course's hub -------------------------------
# Nothing below runs during grading: it is only called from a cell the student writes, and it
# only sends the saved notebook to the hub's pre-check service and prints what comes back.

PRECHECK_URL_VARIABLE = "KIT_PRECHECK_URL"  # set by the hub for every student's server
PRECHECK_WAIT_SECONDS = 600


def precheck(notebook, folder=None, wait=PRECHECK_WAIT_SECONDS):
    """Have the hub's grader check your saved `notebook` (e.g. "010_history.ipynb") and print what it found.

    The grader runs its own tests, the hidden ones too, on the saved file: save
    the notebook first. You see each test cell's points and, where it failed,
    what went wrong; never the tests themselves. Checks are rate-limited (a
    cooldown per notebook and a daily number); the reply says when to come back.
    Returns the result as a dict (None when the check could not be run).
    """
    import json as json_module
    import secrets
    import time
    import urllib.error
    import urllib.request

    base = os.environ.get(PRECHECK_URL_VARIABLE, "")
    token = os.environ.get("JUPYTERHUB_API_TOKEN", "")
    if not base or not token:
        print("The pre-check runs on the course's hub only: this server does not know its address or your token.")
        return None
    path = os.path.join(folder or os.getcwd(), os.path.basename(notebook))
    try:
        with open(path, encoding="utf-8") as handle:
            content = json_module.load(handle)
    except (OSError, ValueError) as error:
        print(f"Cannot read {path}: {error}. Save the notebook, then call precheck again.")
        return None

    def call(url, body=None):
        request = urllib.request.Request(
            url,
            data=None if body is None else json_module.dumps(body).encode(),
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
            method="GET" if body is None else "POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=90) as response:
                return json_module.load(response)
        except urllib.error.HTTPError as error:
            return json_module.load(error)

    body = {
        "notebook": os.path.basename(notebook),
        "content": content,
        "nonce": secrets.token_hex(16),
        "sent": time.time(),
    }
    base = base.rstrip("/") + "/api/"
    check = call(base + "checks", body)
    deadline = time.monotonic() + wait
    while "error" not in check and check.get("state") != "done" and time.monotonic() < deadline:
        check = call(f"{base}checks/{check['id']}?wait=30")
    print(precheck_text(check))
    return check


def precheck_text(check):
    """What a pre-check reply says, as lines for the student."""
    if "error" in check:
        return f"Pre-check not run: {check.get('message', check['error'])}"
    if check.get("state") != "done":
        return "The pre-check is still waiting in the queue; call precheck again in a minute to see it."
    result = check["result"]
    if result["status"] != "graded":
        return f"Pre-check of {check['notebook']}: {result['status']}. {result['message']}"
    lines = [f"Pre-check of {check['notebook']}: {result['score']:g} of {result['max_score']:g} points"]
    for cell in result["cells"]:
        mark = "passed" if cell["passed"] else "failed"
        lines.append(f"  {cell['cell']}: {cell['points']:g}/{cell['max_points']:g} {mark}")
        if cell["diagnosis"]:
            lines.append(f"      {cell['diagnosis']}")
    return "\n".join(lines)
