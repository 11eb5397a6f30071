"""Sealed grading: the test cells run in the grader, the student's kernel only answers calls.

For each notebook, `SealedNotebook` keeps a namespace in the grading worker.
The course's read-only cells (imports, helpers) run both in the kernel and
here, except demos, which only show something and run in the kernel alone; answer cells run in the kernel only, and here each answer name is a
`RemoteAnswer`; test cells run here only, from the trusted source notebook,
never from the submission. `call_answer` (autograd_checks.py) sends every call
of a student's function through `crossing.py` to the kernel and gets data back,
so expected values, hidden test code and the verdict never enter the student's
process, and a test cell's output (what nbgrader scores, what feedback shows)
is written by this process alone.

Tensors the test makes are read-only to the kernel, except those the test
declares with `may_change_in_place` (see crossing.py); a change the kernel
made to another is refused. Made to a tensor the call handed over, it is the student's mistake
and fails the cell (handed_inputs.py); made to any other, it becomes a finding.

What the kernel reports about its own objects (leafness, `grad_fn`, `.grad`,
`_version`, storage sharing, hooks that fired) is still the kernel's word:
tamper-evident through the guard's probes, not tamper-proof. Where the public
module can tell a forged report (a hook called outside a backward pass, a
dispatch mode taken off its stack), its check raises `Forgery`; the cell
scores zero and `forgeries` lists it, so the submission is flagged.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib.util
import io
import linecache
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from nbformat import NotebookNode

from gradekit.authoring.cells import is_demo
from gradekit.core.cell_ids import grade_id
from gradekit.core.failures import GraderFailure
from gradekit.grading.handed_inputs import take_changes_to_arguments
from gradekit.sandbox.crossing import CrossingError, Mirror, call_message, checked_reply, result_of

HELPER_MODULES = ("autograd_checks", "local_digits")  # the course's own modules beside the notebooks
OUTPUT_LIMIT = 20_000  # characters of one test cell's printed output


class KernelStopped(BaseException):
    """The kernel died or hung while answering: the grader stops running this notebook's cells.

    Not an Exception, so that no `except Exception` in a test cell can swallow it.
    """


class CellOutOfTime(BaseException):
    """The test cell's time ran out during a call; the student's code was interrupted.

    Not an Exception: the cell ends here, as it would in the kernel, whatever the test catches.
    """


class RemoteAnswer:
    """What the test cells see under an answer's name: calls go to the student's kernel."""

    def __init__(self, name: str, mirror: Mirror):
        self._kit_answer_name = name
        self.__name__ = self.__qualname__ = name
        self._mirror = mirror

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._mirror.call(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<the student's {self._kit_answer_name}>"


class SealedSources(dict[str, NotebookNode]):
    """The course's trusted notebooks by name, shared by every Execute step that grades from them, never copied.

    traitlets deep-copies a configured value into each step it builds: here every
    notebook of the course, once per notebook graded (about 30 ms of a grading
    process each time). The steps only read them.
    """

    def __deepcopy__(self, memo: dict) -> SealedSources:
        return self


class SealedNotebook:
    """The grading side of one notebook: its namespace, its mirror, its channel to the kernel."""

    def __init__(self, source: NotebookNode, helpers: dict[str, Path], exchange: Callable[[bytes], bytes]):
        self.cells = {grade_id(cell): cell for cell in source.cells if grade_id(cell) and cell.cell_type == "code"}
        self.exchange = exchange
        self.broken_replies: list[str] = []  # replies that could not be read: a finding for the TA
        self.forgeries: list[str] = []  # facts of the kernel a check found forged: a finding for the TA
        self.mirror = Mirror("grader", call=self._call)
        self.helpers = {name: self._load_helper(name, path) for name, path in helpers.items()}
        self._printed = io.StringIO()
        self.namespace: dict[str, object] = {"__name__": "__main__", "__builtins__": self._builtins()}
        for name in _answer_names(self.cells.values()):
            self.namespace[name] = RemoteAnswer(name, self.mirror)

    def role(self, cell: NotebookNode) -> str:
        """`test`, `readonly` or `kernel` (answer cells, demos and anything the student added)."""
        trusted = self.cells.get(grade_id(cell))
        if trusted is None or is_demo(trusted):
            return "kernel"
        meta = trusted.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            return "test"
        if meta.get("locked") and not meta.get("solution"):
            return "readonly"
        return "kernel"

    def run_readonly(self, cell: NotebookNode) -> str | None:
        """Run a read-only cell's trusted source here too; returns why it failed, if it did."""
        outcome = self._run(grade_id(cell))
        return None if outcome[1] is None else f"{type(outcome[1]).__name__}: {outcome[1]}"

    def run_test(self, cell: NotebookNode) -> list[NotebookNode]:
        """Run a test cell's trusted source here; its outputs as nbgrader will score them."""
        printed, error = self._run(grade_id(cell))
        if _is_forgery(error):
            self.forgeries.append(str(error))
        outputs = []
        if printed:
            outputs.append(NotebookNode(output_type="stream", name="stdout", text=printed[:OUTPUT_LIMIT]))
        if error is not None:
            outputs.append(_error_output(error))
        return outputs

    # ----- inside ------------------------------------------------------------------------

    def _run(self, cell_id: str | None) -> tuple[str, BaseException | None]:
        source = self.cells[cell_id].source
        filename = f"<grader: {cell_id}>"
        # Registered so that inspect and tracebacks can read it; it never leaves this process.
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        self._printed = io.StringIO()
        try:
            exec(compile(source, filename, "exec"), self.namespace)
        except (KernelStopped, GraderFailure):
            raise
        except BaseException as error:  # the verdict of a failed check, or an answer's error
            return self._printed.getvalue(), error
        return self._printed.getvalue(), None

    def _call(self, target: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        request = call_message(self.mirror, target, args, kwargs)
        try:
            reply = checked_reply(self.mirror.incoming(self.exchange(request)))
        except CrossingError as error:  # the kernel's side of the wire was broken or replaced
            self.broken_replies.append(str(error))
            raise
        return result_of(reply)

    def _builtins(self) -> dict[str, Any]:
        names = dict(vars(builtins))
        real_import = builtins.__import__

        def course_import(
            name: str,
            globals: Mapping[str, object] | None = None,
            locals: Mapping[str, object] | None = None,
            fromlist: Sequence[str] = (),
            level: int = 0,
        ) -> ModuleType:
            if name in self.helpers and level == 0:
                return self.helpers[name]
            return real_import(name, globals, locals, fromlist, level)

        def grader_print(
            *values: object, sep: str | None = " ", end: str | None = "\n", file: Any = None, flush: bool = False
        ) -> None:
            print(*values, sep=sep, end=end, file=self._printed if file is None else file, flush=flush)

        names.update(__import__=course_import, print=grader_print)
        return names

    def _load_helper(self, name: str, path: Path) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load the course module {path}")
        module = importlib.util.module_from_spec(spec)
        # A fresh module for every notebook, from code compiled once per version of the file.
        exec(_helper_code(path.read_bytes(), str(path)), module.__dict__)
        if hasattr(module, "run_in_student_process"):
            setattr(module, "run_in_student_process", functools.partial(self._run_in_kernel, module))
        if hasattr(module, "allow_changes_in_student_process"):
            setattr(module, "allow_changes_in_student_process", self.mirror.allow_changes)
        return module

    def _run_in_kernel(
        self, module: ModuleType, function: object, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """The call, run in the kernel; a change there to a tensor it was handed is the student's error.

        The course's module says so by defining InputChanged; without it, such a change stays a finding.
        """
        if not hasattr(module, "InputChanged"):
            return self.mirror.call(function, args, kwargs)
        since = len(self.mirror.refusals)
        try:
            result = self.mirror.call(function, args, kwargs)
        except BaseException:  # the call's own error (the student's, or the grader's) is what the cell reports
            take_changes_to_arguments(self.mirror, since, (args, kwargs))
            raise
        changed = take_changes_to_arguments(self.mirror, since, (args, kwargs))
        if changed:
            raise module.InputChanged(" and ".join(changed))
        return result


def _answer_names(cells: Iterable[NotebookNode]) -> set[str]:
    """Names the answer cells of the source notebook define at their top level."""
    names = set()
    for cell in cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution"):
            continue
        for node in ast.parse(cell.source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


def _is_forgery(error: BaseException | None) -> bool:
    """A check of the course's public module raised it here on seeing a forged fact (autograd_checks.Forgery).

    An error of the student's code is rebuilt from its type name and message
    only, so it can never carry the mark.
    """
    return getattr(error, "forged", False) is True and not getattr(error, "raised_in_student_process", False)


def _error_output(error: BaseException) -> NotebookNode:
    """The error output IPython would show: a check's own rendering, else the exception's last line."""
    ename = type(error).__name__
    evalue = str(error)[:OUTPUT_LIMIT]
    render = getattr(error, "_render_traceback_", None)
    try:
        traceback = list(render()) if callable(render) else [f"{ename}: {evalue}"]
    except Exception:
        traceback = [f"{ename}: {evalue}"]
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=traceback)


@functools.cache
def _helper_code(source: bytes, path: str) -> CodeType:
    """A course module's code, compiled once per content; as an import compiles it, without this file's own `__future__` flags."""
    return compile(source, path, "exec", dont_inherit=True)
