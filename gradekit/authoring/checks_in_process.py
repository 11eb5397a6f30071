"""Run a notebook script's checks in this process, without a kernel or nbgrader: seconds, not minutes.

The script's cells run top to bottom in a fresh module's namespace, as in a
kernel: setup, demo and test cells as written, answer cells with the text a
subject submits (the reference, a negative control, or the release's blank
stub). A cell that raises does not stop the run, as in nbgrader. A test cell
passes when it raises nothing and writes nothing to stderr, nbgrader's own
rule; a warning that reaches the warning display counts as stderr, since a
kernel prints it there. The misconceptions a failure names are read from its
error and stderr text.

The answers run as text in the notebook's namespace rather than as the
imported reference functions: the checks patch an answer's globals
(`standing_in`), and those must be the notebook's, not a module's.

Where this differs from real grading (the proof, `gradekit prove`, is the
judge; this is the quick loop; on the committed course both give every
subject the same grades, tests/test_check_course_against_proof.py):
- there is no per-cell timeout, no sandbox, no intake and no guard: only the
  course's own answers run here, never a student's;
- stderr written below Python (C code writing to file descriptor 2) is not
  seen, and nbgrader's IgnorePattern (runtime noise lines) is not applied;
- the namespace's module is `__notebook__`, not `__main__`;
- a call that sealed grading sends to the student's kernel runs here directly,
  under the wire's rules: a function it passes that could not cross (one the
  test defines rather than takes from the public module by name) and data the
  wire would not send (a graph the test built, an object of the test's) are
  refused here as they are there; every value the call returns goes through
  the wire's round trip (crossing.delivered): a value the kernel would refuse
  is the same error here, and containers arrive in the wire's form (a
  namedtuple as a tuple, an OrderedDict as a dict, a str subclass as a str),
  while tensors, exact lists and dicts and other objects stay the very objects
  (under sealed grading they are paired copies or handles); the wire's caps on
  a whole notebook's bytes are not counted here;
- all subjects share one process: torch's grad mode and default dtype start
  as in a new kernel, and the thread count, grad mode, default dtype and
  compiled-code caches are put back after each run, but other global state an
  answer changes would leak into the next run, and the support modules
  (autograd_checks, local_digits) are loaded once, not once per notebook.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import inspect
import io
import itertools
import sys
import traceback
import types
import warnings
from pathlib import Path
from typing import Any, Callable

from gradekit.core.diagnoses import named_misconceptions
from gradekit.core.notebook_script import Role, ScriptCell
from gradekit.sandbox.crossing import (
    PLAIN_TYPES,
    CrossingError,
    Mirror,
    crosses_by_name,
    delivered,
    function_refusal,
    refuse_unsendable,
)

# Modules the notebooks import by bare name, found beside them in the source folder.
SUPPORT_MODULES = ("autograd_checks", "local_digits")
# The name of the module a running notebook's namespace belongs to (a kernel's is __main__).
NOTEBOOK_MODULE = "__notebook__"


@dataclasses.dataclass(frozen=True)
class TestOutcome:
    __test__ = False  # a result record, not a pytest class

    cell: str
    points: float
    passed: bool
    named: tuple[str, ...] = ()
    failure: str = ""  # the error and stderr text of a failed cell


def load_support_modules(source_dir: Path) -> None:
    """Put the notebooks' support modules into sys.modules, loaded by path (sys.path is left alone)."""
    for name in SUPPORT_MODULES:
        path = (Path(source_dir) / f"{name}.py").resolve()
        loaded = sys.modules.get(name)
        if loaded is not None and Path(getattr(loaded, "__file__", "")).resolve() == path:
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load the support module {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


# Told of every call a test cell sends to the student's side: (test cell, function, args, kwargs).
CallWatcher = Callable[[str, Any, tuple, dict], None]


def run_checks(
    script: tuple[ScriptCell, ...],
    answers: dict[str, str],
    label: str = "notebook",
    on_call: CallWatcher | None = None,
    stop_after: Callable[[TestOutcome], bool] | None = None,
    cells_within: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> tuple[TestOutcome, ...]:
    """Run the script with `answers` (answer cell -> its text); one outcome per test cell, in order.

    `on_call`, when given, sees each call a cell makes to the student's side before it runs.
    `stop_after`, when given, ends the run at the first test outcome it accepts: the outcomes
    stop there (a mutant a cell has killed needs none of the cells after it).
    `cells_within` makes the context the cells run in (a time limit's alarm): it is left before
    the run puts back the state it changed, so nothing it raises can cut that short.
    """
    outcomes = []
    answer_files = {f"<{label}:{cell.grade_id}>" for cell in script if cell.role is Role.ANSWER}
    running = [""]  # the cell whose code runs now, for on_call

    def watch(function, args, kwargs):
        if on_call is not None:
            on_call(running[0], function, tuple(args), dict(kwargs))

    with (
        _notebook_module() as namespace,
        _fresh_torch_state(),
        _only_what_crosses(answer_files, watch),
        warnings.catch_warnings(record=True) as shown,
    ):
        _kernel_warning_filters()
        with cells_within():
            for cell in script:
                if cell.role.is_markdown:
                    continue
                running[0] = cell.grade_id
                source = answers[cell.grade_id] if cell.role is Role.ANSWER else cell.body
                seen = len(shown)
                error, stderr = _run_cell(source, namespace, f"<{label}:{cell.grade_id}>")
                if cell.role is Role.TEST:
                    stderr += "".join(_warning_text(w) for w in shown[seen:])
                    outcomes.append(_outcome(cell, error, stderr))
                    if stop_after is not None and stop_after(outcomes[-1]):
                        break
    return tuple(outcomes)


@contextlib.contextmanager
def _notebook_module():
    """A fresh module for the notebook's namespace, importable by name while it runs (torch.compile looks it up)."""
    module = types.ModuleType(NOTEBOOK_MODULE)
    sys.modules[NOTEBOOK_MODULE] = module
    try:
        yield module.__dict__
    finally:
        del sys.modules[NOTEBOOK_MODULE]


@contextlib.contextmanager
def _only_what_crosses(answer_files: set[str], watch: Callable[[Any, tuple, dict], None]):
    """Refuse, as the wire would, a call to the student's side that passes a function of the test.

    Allowed: the public module's and libraries' functions (they cross by name),
    the answers' own functions, and whatever the student's side made and
    handed back (under sealed grading those stay there, behind handles).
    """
    checks = sys.modules.get("autograd_checks")
    if checks is None or not hasattr(checks, "run_in_student_process"):
        yield
        return
    real = getattr(checks, "run_in_student_process")
    made_there: list[object] = []  # recognised by identity when the test passes them back
    # What the student's side holds, paired as the grader's mirror pairs it: sent back, it crosses as a handle.
    on_their_side = Mirror("grader")
    their_numbers = itertools.count()

    def run_in_student_process(function, args, kwargs):
        watch(function, args, kwargs)
        for value in _callables_in((function, args, kwargs)):
            if not _may_cross(value, answer_files, made_there):
                raise CrossingError(function_refusal(value))
        refuse_unsendable(on_their_side, (function, tuple(args), tuple(dict(kwargs).items())))
        result = real(function, args, kwargs)
        made_there.extend(_callables_in(result))
        for made in _objects_in(result):
            if on_their_side.handle_of(made) is None:
                on_their_side._pair(f"k{next(their_numbers)}", made)
        return _as_delivered(result, delivered(result))

    setattr(checks, "run_in_student_process", run_in_student_process)
    try:
        yield
    finally:
        setattr(checks, "run_in_student_process", real)


def _may_cross(value: object, answer_files: set[str], made_there: list[object]) -> bool:
    if crosses_by_name(value) or any(value is made for made in made_there):
        return True
    if isinstance(value, types.MethodType):  # a method of an object the student's side holds
        return True
    code = getattr(inspect.unwrap(value), "__code__", None) if callable(value) else None
    return code is not None and code.co_filename in answer_files


def _callables_in(value: object, depth: int = 0) -> list[object]:
    """The callables in `value` and the lists, tuples, dicts and partials inside it, as the wire would walk them."""
    if depth > 8:
        return []
    if isinstance(value, (list, tuple, set, frozenset)):
        return [found for item in value for found in _callables_in(item, depth + 1)]
    if isinstance(value, dict):
        return [found for item in value.items() for found in _callables_in(item, depth + 1)]
    if isinstance(value, functools.partial):
        return _callables_in((value.func, value.args, value.keywords), depth + 1)
    return [value] if callable(value) and not isinstance(value, type) else []


def _objects_in(value: object, depth: int = 0) -> list[object]:
    """The objects in `value` that the student's side would keep (all but plain values), containers walked."""
    if type(value) in PLAIN_TYPES or depth > 8:
        return []
    found = [value]
    if isinstance(value, (list, tuple, set, frozenset)):
        found += [made for item in value for made in _objects_in(item, depth + 1)]
    elif isinstance(value, dict):
        found += [made for item in dict.items(value) for made in _objects_in(item, depth + 1)]
    return found


def _as_delivered(sent: Any, arrived: Any) -> Any:
    """`sent` in the form the wire gives it (`arrived`), keeping every object the wire pairs or holds.

    Exact lists and dicts, tensors, arrays and other objects are `sent`
    itself (sealed grading pairs them, or keeps them behind a handle);
    tuples, sets and subclasses of builtins take `arrived`'s kind, rebuilt
    around `sent`'s items.
    """
    kind = type(arrived)
    if type(sent) in (list, dict) or kind not in (tuple, list, dict, set, frozenset):
        return arrived if kind in PLAIN_TYPES else sent
    if kind is dict:
        pairs = zip(dict.items(sent), arrived.items())
        return {_as_delivered(k, ka): _as_delivered(v, va) for (k, v), (ka, va) in pairs}
    if kind in (set, frozenset):
        return kind(iter(sent))
    own_items = tuple.__iter__(sent) if isinstance(sent, tuple) else list.__iter__(sent)
    return kind(_as_delivered(item, item_arrived) for item, item_arrived in zip(own_items, arrived))


def _run_cell(source: str, namespace: dict, filename: str) -> tuple[BaseException | None, str]:
    """Execute one cell as a kernel would, keeping going after an error; returns the error and stderr text."""
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        code = compile(source, filename, "exec")
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            exec(code, namespace)
    except (Exception, CrossingError) as error:  # a failing cell is a result, as in nbgrader
        return error, stderr.getvalue()
    return None, stderr.getvalue()


def _outcome(cell: ScriptCell, error: BaseException | None, stderr: str) -> TestOutcome:
    if error is None and not stderr:
        return TestOutcome(cell.grade_id, cell.required_points, True)
    text = "\n".join(filter(None, [_error_text(error) if error else "", stderr]))
    return TestOutcome(cell.grade_id, cell.required_points, False, named_misconceptions(text), text)


def _error_text(error: BaseException) -> str:
    """What a kernel shows: the checks' own rendering when the error has one, else the traceback."""
    render = getattr(error, "_render_traceback_", None)
    if render is not None:
        return "".join(line if line.endswith("\n") else line + "\n" for line in render())
    return "".join(traceback.format_exception(error))


def _warning_text(message: warnings.WarningMessage) -> str:
    return warnings.formatwarning(message.message, message.category, message.filename, message.lineno)


def _kernel_warning_filters() -> None:
    """Python's default filters, with deprecations shown for the notebook's own code as IPython does."""
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module=NOTEBOOK_MODULE)
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category, append=True)
    warnings.simplefilter("default", append=True)


@contextlib.contextmanager
def _fresh_torch_state():
    """Give each run the process-wide torch settings a new kernel starts with, and put them back after."""
    import torch

    saved = (torch.get_num_threads(), torch.is_grad_enabled(), torch.get_default_dtype())
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)
    try:
        yield
    finally:
        torch.set_num_threads(saved[0])
        torch.set_grad_enabled(saved[1])
        torch.set_default_dtype(saved[2])
        if "torch._dynamo" in sys.modules:
            sys.modules["torch._dynamo"].reset()
