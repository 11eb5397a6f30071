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
import os
import sysconfig
import traceback
import warnings

import torch

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
        "backward() was called without a cotangent on an output with more than one element",
    ),
    (
        "does not require grad",
        "grad-on-by-default",
        "backward() found no tensor that requires grad: the input was never marked with requires_grad",
    ),
    (
        "can require gradients",
        "numpy-default-dtype",
        "an integer tensor was asked to require grad; torch.tensor makes int64 from Python ints",
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


def may_change_in_place(*tensors):
    """Declare tensors of the test that the code beside the student's may change in place.

    These are what an exercise hands over to be updated: the parameters of an
    update step, or a tensor a step of the test changes beside the student's
    code. Under sealed grading every other tensor the test makes is read-only
    to the student's kernel (its `.grad` aside): a change made there is
    refused and flags the submission. Take expected values from copies made
    before the call, never from a tensor declared here.
    """
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


def call_answer(function, *args, known_errors=COMMON_ERRORS, **kwargs):
    """Call a student's function with warnings kept off stderr.

    An error raised inside it becomes a Diagnosis that shows the student's own
    frames only; when its text contains a substring of `known_errors`, the
    diagnosis names that misconception. Substrings are short phrases PyTorch
    has kept stable across 2.x releases.
    """
    name = getattr(function, "__name__", "your function")
    with quiet():
        try:
            return run_in_student_process(function, args, kwargs)
        except Diagnosis:
            raise
        except NotImplementedError:
            raise Diagnosis(f"{name} is not written yet: it still raises NotImplementedError") from None
        except Exception as error:  # the student's code may raise anything
            raise _answer_error(name, error, known_errors) from None


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


def _student_traceback(error):
    """The traceback from the student's function down, without library frames, ending in the error line.

    An error rebuilt from the student's kernel (sealed grading) has no frames
    here: its type and message are all that crossed.
    """
    if getattr(error, "raised_in_student_process", False):
        return traceback.format_exception_only(type(error), error)
    frames = [
        frame for frame in traceback.extract_tb(error.__traceback__.tb_next)
        if not os.path.realpath(frame.filename).startswith(_LIBRARY_DIRS)
    ]
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
        f"{what} should be a torch.Tensor, got {type(value).__name__}",
    )
    expect(
        type(value) in PLAIN_TENSOR_TYPES,
        f"{what} should be a plain torch.Tensor, not the subclass {type(value).__name__}",
    )
    if shape is not None:
        expect(
            tuple(value.shape) == tuple(shape),
            f"{what} should have shape {tuple(shape)}, got {tuple(value.shape)}",
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

    A student's function looks up its helpers (raw_forward, raw_metrics, ...) by
    name when it runs; the grader's small stand-ins let one exercise be graded
    without depending on the student's answers to the others.
    """
    namespace = getattr(function, "__globals__", {})
    missing = object()
    saved = {name: namespace.get(name, missing) for name in replacements}
    namespace.update(replacements)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value


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


@_around_student_code
@contextlib.contextmanager
def element_budget(limit, message, misconception=None):
    """Stop the block as soon as one tensor operation produces more than `limit` elements.

    Raises Diagnosis(message, misconception) naming the operation and the shape;
    used to reject code that materialises a dense Jacobian before it can use
    much memory. The operation runs before its output is measured, so choose
    input shapes whose dense Jacobian is still small in absolute terms.
    """
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    seen = []

    class _Budget(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for value in tree_flatten(out)[0]:
                if isinstance(value, torch.Tensor) and value.numel() > limit:
                    seen.append(f"{func} made a tensor of shape {tuple(value.shape)}")
                    raise Diagnosis(f"{message} ({seen[0]})", misconception)
            return out

    try:
        with _Budget():
            yield
    except Exception:
        if not seen:
            raise
    if seen:  # also when the error was caught, or came back wrapped in another type
        raise Diagnosis(f"{message} ({seen[0]})", misconception) from None
