"""Broken and hostile submissions: one named case each, built from the reference, with its exact outcome.

Every case submits the three smallest notebooks (010_history, 020_leaves,
021_cotangents) as the reference would, then breaks or attacks something,
mostly around the `chain_gradients` exercise of 020_leaves. `Expected` is what grading must
give: the row's status, the graded cells that score zero (every other cell
earns full marks), and fragments the row's message, notes or findings must hold.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Callable

import nbformat

from gradekit.core.cell_ids import cells_by_grade_id
from gradekit.core.course import REPO_ROOT, Course
from gradekit.core.manifest import Manifest
from gradekit.core.status import Status
from gradekit.grading import kernel_cgroups
from gradekit.grading.intake import stamp
from gradekit.grading.warm_kernels import KERNEL_FILE_BYTES
from gradekit.proof.subjects import answer_sources, fill_answers

NOTEBOOKS = ("010_history", "020_leaves", "021_cotangents")
TARGET = "020_leaves"
ALL_OF_010 = frozenset(
    {"010_history/test_float64_leaf", "010_history/test_square_sum_grad", "010_history/test_gradient_at"}
)
CHAIN_TEST = f"{TARGET}/test_chain_gradients"
CELLS_AFTER_CHAIN = frozenset({CHAIN_TEST, f"{TARGET}/test_why_grad_is_none", f"{TARGET}/test_can_require_grad"})
HONEST = "honest-student"  # the student graded beside the cases, with the reference answers
CELL_TIMEOUT = 3  # seconds; the cases that hang would otherwise wait a minute per cell

# A chain_gradients that returns the wrong numbers: what a cheat hopes to get full marks for.
WRONG_CHAIN = "def chain_gradients(x):\n    zero = torch.zeros((), dtype=torch.float64)\n    return zero, zero\n"


@dataclasses.dataclass(frozen=True)
class Expected:
    status: Status
    zero_cells: frozenset[str] = frozenset()  # "<notebook>/<grade id>"
    says: tuple[str, ...] = ()
    attacked: str = TARGET  # the notebook whose grades a flag withholds
    hides_the_tests: bool = False  # no string of a hidden test in the row or in any output of the case
    shows: tuple[str, ...] = ()  # fragments the outputs of the case's graded notebooks must hold


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    build: Callable[["Builder"], None]
    expected: Expected


class Builder:
    """Writes one student's submission folder, starting from the reference answers."""

    def __init__(self, course: Course, manifest: Manifest, folder: Path):
        self.course, self.manifest, self.folder = course, manifest, folder
        self.notebooks = {name: self.reference(name) for name in NOTEBOOKS}

    def reference(self, name: str):
        return fill_answers(self.course.release_dir / f"{name}.ipynb", answer_sources(self.manifest, name, None))

    def cell(self, grade_id: str, notebook: str = TARGET):
        return cells_by_grade_id(self.notebooks[notebook])[grade_id]

    def index(self, grade_id: str, notebook: str = TARGET) -> int:
        return self.notebooks[notebook].cells.index(self.cell(grade_id, notebook))

    def wrap_chain(self, first_lines: str) -> None:
        """Keep the reference chain_gradients but run `first_lines` each time it is called."""
        body = "".join(f"    {line}\n" for line in first_lines.splitlines())
        self.cell("answer_chain_gradients").source += (
            "\n\n_reference_chain_gradients = chain_gradients\n\n\n"
            f"def chain_gradients(x):\n{body}    return _reference_chain_gradients(x)\n"
        )

    def cheat(self, patch: str) -> None:
        """A wrong chain_gradients, with `patch` run when the answer cell runs."""
        self.cell("answer_chain_gradients").source = WRONG_CHAIN + "\n\n" + patch

    def write(self) -> None:
        written = {name: notebook for name, notebook in self.notebooks.items() if notebook is not None}
        if not written:  # the case made its folder (or a link in its place) itself
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, notebook in written.items():
            nbformat.write(notebook, self.folder / f"{name}.ipynb")
        stamp(self.folder)


def _retype(cell, cell_type: str) -> None:
    cell.cell_type = cell_type
    cell.pop("outputs", None)
    cell.pop("execution_count", None)


def _malformed(b: Builder) -> None:
    b.notebooks["010_history"] = None
    b.folder.mkdir(parents=True)
    (b.folder / "010_history.ipynb").write_text('{"cells": [ {"cell_type": "code", "source": ')


def _missing(b: Builder) -> None:
    b.notebooks["010_history"] = None


def _extra(b: Builder) -> None:
    b.folder.mkdir(parents=True)
    nbformat.write(copy.deepcopy(b.notebooks[TARGET]), b.folder / "my-notes.ipynb")


def _empty(b: Builder) -> None:
    b.notebooks = {}
    b.folder.mkdir(parents=True)


def _unknown_files_only(b: Builder) -> None:
    b.notebooks = {}
    b.folder.mkdir(parents=True)
    (b.folder / "answers.txt").write_text("I wrote my answers here.\n")


def _bad_timestamp(b: Builder) -> None:
    b.folder.mkdir(parents=True)
    (b.folder / "timestamp.txt").write_text("last tuesday, around noon\n")


def _deleted_test(b: Builder) -> None:
    b.notebooks[TARGET].cells.remove(b.cell("test_chain_gradients"))


def _deleted_answer(b: Builder) -> None:
    b.notebooks[TARGET].cells.remove(b.cell("answer_chain_gradients"))


def _duplicated(b: Builder) -> None:
    for grade_id in ("answer_chain_gradients", "test_chain_gradients"):
        b.notebooks[TARGET].cells.insert(b.index(grade_id) + 1, copy.deepcopy(b.cell(grade_id)))


def _reordered(b: Builder) -> None:
    test = b.cell("test_chain_gradients")
    b.notebooks[TARGET].cells.remove(test)
    b.notebooks[TARGET].cells.insert(b.index("answer_chain_gradients"), test)


def _retyped(b: Builder) -> None:
    _retype(b.cell("answer_chain_gradients"), "markdown")
    _retype(b.cell("test_why_grad_is_none"), "markdown")


def _kernelspec(b: Builder) -> None:
    b.notebooks[TARGET].metadata["kernelspec"] = {"name": "julia-1.9", "display_name": "Julia", "language": "julia"}


def _edited_test(b: Builder) -> None:
    b.cheat("")
    b.cell("test_chain_gradients").source = "pass"


def _changed_points(b: Builder) -> None:
    b.cheat("")
    b.cell("test_chain_gradients").metadata["nbgrader"]["points"] = 30
    b.cell("test_scaled_parameter").metadata["nbgrader"]["points"] = 30


def _changed_grade_id(b: Builder) -> None:
    b.cheat("")
    b.cell("test_chain_gradients").metadata["nbgrader"]["grade_id"] = "my_own_test"


def _shadowing_files(b: Builder) -> None:
    b.folder.mkdir(parents=True)
    (b.folder / "torch.py").write_text("raise SystemExit('a fake torch')\n")
    (b.folder / "numpy.py").write_text("raise SystemExit('a fake numpy')\n")
    (b.folder / "autograd_checks.py").write_text("def expect(*args, **kwargs):\n    pass\n")
    # Pages formgrader would serve from autograded/ on the TA's origin, if they got there.
    (b.folder / "notes.html").write_text("<script>fetch('/api/terminals', {method: 'POST'})</script>\n")
    (b.folder / "figure.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>\n")


def _writes_gradebook(b: Builder) -> None:
    b.wrap_chain(
        "import sqlite3\n"
        "try:\n"
        "    sqlite3.connect('../../../gradebook.db').execute('delete from grade')\n"
        "except Exception:\n"
        "    pass\n"
    )


def _links_out(b: Builder) -> None:
    """A classmate's notebook, a course file and the course itself, linked into the submission."""
    b.notebooks["010_history"] = None
    b.folder.mkdir(parents=True)
    (b.folder / "010_history.ipynb").symlink_to(Path("..", "..", HONEST, b.course.assignment_id, "010_history.ipynb"))
    (b.folder / "timestamp.txt").symlink_to(Path("..", "..", "..", "gradebook.db"))
    (b.folder / "course").symlink_to(Path("..", "..", ".."))


def _linked_folder(b: Builder) -> None:
    b.notebooks = {}
    b.folder.parent.mkdir(parents=True)
    b.folder.symlink_to(Path("..", HONEST, b.course.assignment_id))


# Where one kernel might leave a note for the next: shared memory, and /tmp outside its private folder.
NOTE_PATHS = ("/dev/shm/kit-note-for-the-next-student", "/tmp/kit-note-for-the-next-student")
# Padding that makes a submission the largest, so that the cohort deals it first (largest_first).
PADDING_BYTES = 3_000_000


def _leaves_a_note(b: Builder) -> None:
    b.cell("answer_chain_gradients").source += (
        f"\n\nfor _note in {NOTE_PATHS!r}:\n"
        "    try:\n"
        "        with open(_note, 'w') as _handle:\n"
        "            _handle.write('zeros are right')\n"
        "        print('left a note in', _note)\n"
        "    except OSError:\n"
        "        print('could not leave a note in', _note)\n"
    )
    b.folder.mkdir(parents=True)
    (b.folder / "scratch-work.txt").write_text("x" * PADDING_BYTES)


# Forks without exec (the guard refuses os.fork; fork_exec with a preexec_fn has no audit event):
# a child that asks for a new session, one that asks for a new process group, and one that
# leaves a grandchild behind and exits, reaped at once so that the kernel ends cleanly and no
# child of its own is left for ipykernel to end. Whatever gets loose ignores every polite
# signal and lingers ten minutes, holding the notebook's support module open and writing the note.
LEAVES_ORPHANS = f"""

import _posixsubprocess, os, signal, time


def _linger():
    for deaf in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # the kernel's interrupt reaches its group
        signal.signal(deaf, signal.SIG_IGN)
    held = open('autograd_checks.py')
    end = time.monotonic() + 600
    while time.monotonic() < end:
        for note in {NOTE_PATHS!r}:
            try:
                with open(note, 'w') as handle:
                    handle.write('zeros are right')
            except OSError:
                pass
        time.sleep(0.1)
    os._exit(0)


def _fork(then, new_session=False, new_group=-1):
    try:
        return _posixsubprocess.fork_exec([b'/bin/true'], [b'/bin/true'], False, (), None, None, -1, -1, -1, -1,
            -1, -1, *os.pipe(), True, new_session, new_group, None, None, None, -1, then, False)
    except OSError:
        return None


def _reap(pid):
    end = time.monotonic() + 0.8
    while pid and time.monotonic() < end and not os.waitpid(pid, os.WNOHANG)[0]:
        time.sleep(0.01)


def _orphan_and_exit():
    _fork(_linger)
    os._exit(0)


for _attempt in ((_linger, True), (_linger, False, 0), (_orphan_and_exit,)):
    _reap(_fork(*_attempt))
"""


def _leaves_orphans(b: Builder) -> None:
    b.cell("answer_chain_gradients").source += LEAVES_ORPHANS
    b.folder.mkdir(parents=True)
    (b.folder / "scratch-work.txt").write_text("x" * PADDING_BYTES)


def _follows_a_note(b: Builder) -> None:
    b.wrap_chain(
        "import os\n"
        f"if any(os.path.exists(note) for note in {NOTE_PATHS!r}):\n"
        "    return torch.zeros((), dtype=torch.float64), torch.zeros((), dtype=torch.float64)"
    )


def _copies_from_the_exchange(b: Builder) -> None:
    """A classmate's submission waits in the exchange; the answer lists the exchange and reads it from C."""
    exchange = b.course.exchange_root
    seeded = (
        exchange
        / b.course.course_id
        / "inbound"
        / f"classmate+{b.course.assignment_id}+2026-11-01 10:00:00 UTC"
        / f"{TARGET}.ipynb"
    )
    seeded.parent.mkdir(parents=True)
    nbformat.write(b.reference(TARGET), seeded)
    b.cheat(
        "import json, os\n"
        f"print('in the exchange:', [names for _, _, names in os.walk({str(exchange)!r})])\n"
        "try:\n"
        f"    _raw = torch.from_file({str(seeded)!r}, size={seeded.stat().st_size}, dtype=torch.uint8).numpy().tobytes()\n"
        "    _sources = [''.join(cell['source']) for cell in json.loads(_raw)['cells']]\n"
        "    exec(next(source for source in _sources if 'def chain_gradients' in source))\n"
        "    print('copied a classmate')\n"
        "except RuntimeError:\n"
        "    print('the exchange stayed out of reach')\n"
    )


# Attacks on a sealed grade: each one, written into 010's answers, once earned all of 010's points.
ANSWERS_OF_010 = ("answer_float64_leaf", "answer_square_sum_grad", "answer_gradient_at")
WRONG_010 = (
    "def float64_leaf(values):\n    return torch.tensor(values)\n\n\n"
    "def square_sum_grad(x):\n    return torch.zeros_like(x)\n\n\n"
    "def gradient_at(function, values):\n    return torch.zeros(len(values))\n"
)
FORGES_REPLIES = """
# Drop every error the kernel would report and call every cell a success.
_kernel = get_ipython().kernel
_real_send = _kernel.session.send


def _send(stream, msg_or_type, content=None, *args, **kwargs):
    if msg_or_type == "error":
        return None
    if isinstance(content, dict) and content.get("status") == "error":
        content = {"status": "ok", "execution_count": content.get("execution_count"), "user_expressions": {}, "payload": []}
    return _real_send(stream, msg_or_type, content, *args, **kwargs)


_kernel.session.send = _send
get_ipython().showtraceback = lambda *args, **kwargs: None
"""
TOGGLES_COMPARISONS = """
# Make every comparison agree, and put the real ones back whenever the grader's probe looks.
import sys
import torch.testing

_real = (torch.testing.assert_close, torch.equal, torch.allclose)


def _agree(*args, **kwargs):
    return True


def _watch(event, args):
    if event == "kit.probe":
        torch.testing.assert_close, torch.equal, torch.allclose = _real


torch.testing.assert_close = lambda *args, **kwargs: None
torch.equal = torch.allclose = _agree
sys.addaudithook(_watch)
"""
READS_THE_TEST = """
# Everything outside this function that the kernel can see, sent back in an error message.
import base64
import sys


def _everything():
    seen = []
    frame = sys._getframe(1)
    while frame is not None:
        seen.append(repr(sorted(frame.f_locals))[:300])
        frame = frame.f_back
    history = "\\n".join(get_ipython().user_ns.get("In", []))
    seen.append(base64.b64encode(history.encode()).decode())
    seen.append(history)
    return " | ".join(seen)


def float64_leaf(values):
    raise ValueError(_everything())


def square_sum_grad(x):
    raise ValueError(_everything())


def gradient_at(function, values):
    print(_everything())
    raise ValueError(_everything())
"""
# A gradebook URL (with its password) would sit in a grading process's environment: read it from C.
READS_GRADER_ENVIRONMENT = """


import os as _os

_outcome = []
for _pid in (_os.getppid(), 1):
    try:
        torch.from_file(f"/proc/{_pid}/environ", size=4096, dtype=torch.uint8)
        _outcome.append("read")
    except RuntimeError as _error:
        _outcome.append("refused" if "ermission denied" in str(_error) else "read")
print("other processes' environments:", " ".join(_outcome))
"""
# A gradient three times too large, then the test's own input scaled by three in the kernel's copy of it,
# so that the expected value the test computes from that input afterwards (2 * start) matches the wrong one.
REWRITES_THE_TESTS_INPUT = """
import builtins


def _tests_tensors():
    answer = builtins.__kit_answer__
    found = dict(zip(answer.__code__.co_freevars, (cell.cell_contents for cell in answer.__closure__)))
    mirror = found["mirror"]()
    return [value for handle, value in mirror.objects.items() if handle.startswith("g") and torch.is_tensor(value)]


def square_sum_grad(x):
    (3 * x * x).sum().backward()
    with torch.no_grad():
        for tensor in _tests_tensors():
            if not tensor.requires_grad and tensor.shape == x.shape and torch.equal(tensor, x.detach()):
                tensor.mul_(3)
    return x.grad
"""
# The attacks below give wrong answers whenever they get through, so a hole shows as a zero.
SIGNALS_THROUGH_A_PIDFD = """
import os, signal
try:
    signal.pidfd_send_signal(os.pidfd_open(os.getppid()), 0)  # signal 0: only asks whether it could
    return torch.zeros((), dtype=torch.float64), torch.zeros((), dtype=torch.float64)
except OSError:
    pass
"""


def _makes_pipes_in_a_classmates_folder(b: Builder) -> None:
    """A FIFO or socket where another student's grading will look: it would hang, or feed it."""
    classmate = b.course.submitted_dir / HONEST / b.course.assignment_id
    b.cell("answer_chain_gradients").source += (
        "\n\nimport os, socket\n\n_made = []\n"
        "for _make, _name in ((os.mkfifo, 'pipe'), (lambda path: socket.socket(socket.AF_UNIX).bind(path), 'socket')):\n"
        "    try:\n"
        f"        _make(os.path.join({str(classmate)!r}, _name))\n"
        "        _made.append(_name)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    b.wrap_chain("if _made:\n    return torch.zeros((), dtype=torch.float64), torch.zeros((), dtype=torch.float64)")


# The guard's log, found among the kernel's open files.
GUARD_LOG_DESCRIPTORS = """
import json, os, sys


def _guard_logs():
    found = []
    for name in os.listdir('/proc/self/fd'):
        try:
            if 'guard.jsonl' in os.readlink(f'/proc/self/fd/{name}'):
                found.append(int(name))
        except OSError:
            pass
    return found
"""
ANSWERS_THE_PROBE = (
    GUARD_LOG_DESCRIPTORS
    + """

def _clean_answer(event, args):
    if event == 'kit.probe':
        for log in _guard_logs():
            os.write(log, (json.dumps({'probe': args[0], 'findings': [], 'refusals': 0}) + '\\n').encode())


sys.addaudithook(_clean_answer)
"""
)
# The guard now writes into the void; the real log is kept to receive answers nobody checked.
FORGES_THE_GUARDS_LOG = (
    GUARD_LOG_DESCRIPTORS
    + """
_real_audit = sys.audit
_log = _guard_logs()[0]
_kept = os.dup(_log)
os.dup2(os.open(os.devnull, os.O_WRONLY), _log)


def _audit(event, *args):
    if event == 'kit.probe':
        os.write(_kept, (json.dumps({'probe': args[0], 'findings': [], 'refusals': 0}) + '\\n').encode())
        return
    _real_audit(event, *args)


sys.audit = _audit
"""
)
REDIRECTS_THE_GUARDS_LOG = (
    GUARD_LOG_DESCRIPTORS
    + """
import tempfile

os.dup2(os.open(os.path.join(tempfile.gettempdir(), 'my-own-log'), os.O_WRONLY | os.O_CREAT), _guard_logs()[0])
"""
)
# The box (bubblewrap, then namespaces of the kernel's own): each attack gives wrong answers if it finds anything.
LOOKS_FOR_ITS_WORKER = """
import os
try:  # Landlock keeps the listing closed; the box would show only the kernel and its parent anyway
    _others = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]
except OSError:
    _others = []
if os.environ.get('JPY_PARENT_PID') or _others:
    return torch.zeros((), dtype=torch.float64), torch.zeros((), dtype=torch.float64)
"""


def _reads_the_course_paths(b: Builder) -> None:
    """The course's folders were named in the environment the kernels' parent started with."""
    b.wrap_chain(
        "import os\n"
        "_seen = open('/proc/self/environ', 'rb').read().decode(errors='replace') + repr(dict(os.environ))\n"
        f"if 'KIT_PROTECTED_ROOTS' in _seen or {str(b.course.root)!r} in _seen:\n"
        "    return torch.zeros((), dtype=torch.float64), torch.zeros((), dtype=torch.float64)"
    )


# The reply the grader will read, taken away or swapped for a FIFO (which would block a plain read).
SWAPS_ITS_REPLY = """
import os, sys
_reply = os.path.join(os.path.dirname(sys.argv[sys.argv.index('-f') + 1]), 'mailbox', 'reply')
for _swap in (lambda: os.rename(_reply, _reply + '.old'), lambda: os.mkfifo(_reply + '.pipe')):
    try:
        _swap()
    except OSError:
        pass
"""


LOOSE_LABEL = """
class Agreeable(str):
    __hash__ = str.__hash__

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


def why_grad_is_none(tensor, output, backward_ran):
    return Agreeable("leaf")
"""


# Whatever the test sends the answer (hooks, patched methods, partials), everything reachable from
# it (code constants, closures, arguments, docstrings), sent back in an error message.
LEAKS_WHAT_THE_TEST_SENDS = """
import functools
import types


def _reachable(value, seen, found, depth=0):
    if depth > 6 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _reachable(item, seen, found, depth + 1)
    elif isinstance(value, dict):
        for item in value.items():
            _reachable(item, seen, found, depth + 1)
    elif isinstance(value, functools.partial):
        _reachable((value.func, value.args, value.keywords), seen, found, depth + 1)
    elif isinstance(value, types.FunctionType):
        found.append(value.__qualname__)
        _reachable(value.__code__.co_consts, seen, found, depth + 1)
        _reachable([cell.cell_contents for cell in value.__closure__ or ()], seen, found, depth + 1)
        _reachable(value.__defaults__, seen, found, depth + 1)
    elif isinstance(value, types.CodeType):
        _reachable(value.co_consts, seen, found, depth + 1)


def _leak_what_the_test_sent(x):
    if not x._backward_hooks:  # the visible check sends a plain tensor: answer it as the reference would
        return
    found = []
    _reachable([list(x._backward_hooks.values()), torch.Tensor.__dict__.get("retain_grad")], set(), found)
    raise ValueError(" | ".join(found))
"""
# The formula gradient handed to x's recording hook by hand, then stored in x.grad: no backward() on x.
HOOK_BY_HAND_010 = """
def square_sum_grad(x):
    gradient = 2 * x.detach()
    for hook in list((x._backward_hooks or {}).values()):
        hook(gradient)
    x.grad = gradient
    return x.grad
"""
HOOK_BY_HAND_020 = """
def chain_gradients(x):
    y = (x.detach() ** 2).requires_grad_()  # a fresh leaf: backward() never runs through x
    y.retain_grad()
    torch.sin(y).backward()
    x_grad = 2 * x.detach() * y.grad
    for hook in list((x._backward_hooks or {}).values()):
        hook(x_grad)
    x.grad = x_grad
    return x.grad, y.grad
"""
# The grader's watch popped off the dispatch-mode stack while the dense Jacobian is built.
POPS_THE_WATCH = """
def vjp(f, x, v):
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        jacobian = torch.autograd.functional.jacobian(f, x)
    return (v.reshape(-1) @ jacobian.reshape(v.numel(), x.numel())).reshape(x.shape)
"""


def _leaks_what_the_test_sends(b: Builder) -> None:
    b.cell("answer_chain_gradients").source += "\n\n" + LEAKS_WHAT_THE_TEST_SENDS
    b.wrap_chain("_leak_what_the_test_sent(x)")


def _in_010(*sources: str) -> Callable[[Builder], None]:
    """010's three answers replaced by `sources` (joined into the first answer cell)."""

    def build(b: Builder) -> None:
        for grade_id in ANSWERS_OF_010:
            b.cell(grade_id, "010_history").source = "pass\n"
        b.cell(ANSWERS_OF_010[0], "010_history").source = "\n\n".join(sources)

    return build


# Eight images of 33 MB each, then an HTML page, a JSON document, an update and a widget's state as big:
# every MIME type is cut by bytes, and no widget's state is kept.
HUGE_DISPLAYS = """

import base64 as _base64
from IPython.display import display as _display

_blob = _base64.b64encode(bytes(25_000_002)).decode()
for _ in range(8):
    _display({"image/png": _blob}, raw=True)
_display({"text/html": "<p>" + _blob + "</p>"}, raw=True)
_display({"application/json": {"blob": _blob}}, raw=True)
_display({"text/plain": "small at first"}, raw=True, display_id=True).update({"text/html": _blob}, raw=True)
import comm as _comm  # a widget's state: nbclient would keep it whole in the notebook's metadata

_comm.create_comm(target_name="jupyter.widget", data={"state": {"_model_name": "OutputModel", "blob": _blob}})
del _blob
"""


# One output of 80 MB in one message: cut as it arrives, so the grader never keeps it.
GIGANTIC_DISPLAY = """

from IPython.display import display as _display

_display({"text/plain": "x" * 80_000_000}, raw=True)
"""


# The kernel's half of the wire replaced: each reply is tuples whose two children are one node, 64 levels
# deep, written through the descriptor of the reply file the answering function holds (2^64 nodes to walk).
ENDLESS_REPLY = """
import builtins as _builtins, io as _io, os as _os, torch as _torch

_answer = _builtins.__kit_answer__
_reply_handle = dict(zip(_answer.__code__.co_freevars, (c.cell_contents for c in _answer.__closure__)))["reply_handle"]


def _endless_reply():
    node = ("v", 1)
    for _ in range(64):
        node = ("tuple", (node, node))
    buffer = _io.BytesIO()
    tree = {"updates": [], "body": ("tuple", (("v", "returned"), node))}
    _torch.save({"tree": tree, "storages": []}, buffer)
    _os.pwrite(_reply_handle, buffer.getvalue(), 0)


_builtins.__kit_answer__ = _endless_reply
"""


def case_list() -> tuple[Case, ...]:
    full = Expected(Status.GRADED)
    return (
        # Broken
        Case("malformed-json", _malformed, Expected(Status.GRADED, ALL_OF_010, ("010_history.ipynb cannot be read",))),
        Case(
            "missing-notebook",
            _missing,
            Expected(Status.GRADED, ALL_OF_010, ("not submitted (scores 0): 010_history",)),
        ),
        Case(
            "extra-notebook",
            _extra,
            Expected(Status.GRADED, says=("not graded (not part of the assignment): my-notes.ipynb",)),
        ),
        Case("empty-submission", _empty, Expected(Status.FAILED, says=("the submission folder is empty",))),
        Case(
            "unknown-files-only",
            _unknown_files_only,
            Expected(Status.FAILED, says=("no gradable notebook", "answers.txt")),
        ),
        Case("bad-timestamp", _bad_timestamp, Expected(Status.FAILED, says=("timestamp.txt does not hold a date",))),
        Case(
            "deleted-test-cell",
            _deleted_test,
            Expected(Status.GRADED, says=("deleted cell 'test_chain_gradients' was put back",)),
        ),
        Case(
            "deleted-answer-cell",
            _deleted_answer,
            Expected(Status.GRADED, {CHAIN_TEST}, ("answer cell 'answer_chain_gradients' was deleted",)),
        ),
        Case(
            "duplicated-cells",
            _duplicated,
            Expected(
                Status.GRADED,
                says=("a second copy of 'answer_chain_gradients'", "a second copy of 'test_chain_gradients'"),
            ),
        ),
        Case("reordered-cells", _reordered, Expected(Status.GRADED, {CHAIN_TEST}, ("cells were reordered",))),
        Case("retyped-cells", _retyped, full),
        Case("changed-kernelspec", _kernelspec, full),
        Case(
            "infinite-loop",
            lambda b: b.wrap_chain("while True:\n    pass"),
            Expected(Status.GRADED, {CHAIN_TEST}, ("test_chain_gradients ran past the 3 s limit and was interrupted",)),
        ),
        Case(
            "floods-unasked-replies",
            lambda b: b.cell("answer_chain_gradients").__setitem__("source", FLOODS_UNASKED_REPLIES),
            Expected(
                Status.GRADED, {CHAIN_TEST}, ("answer_chain_gradients ran past the 3 s limit and was interrupted",)
            ),
        ),
        Case(
            "sleeps-past-timeout",
            lambda b: b.wrap_chain("import time\ntime.sleep(3600)"),
            Expected(Status.GRADED, {CHAIN_TEST}, ("test_chain_gradients ran past the 3 s limit and was interrupted",)),
        ),
        Case(
            "ignores-the-interrupt",
            lambda b: b.wrap_chain(
                "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except BaseException:\n        pass"
            ),
            Expected(
                Status.GRADED,
                CELLS_AFTER_CHAIN,
                ("ignored the interrupt (test_chain_gradients); the cells after it score 0",),
            ),
        ),
        Case(
            "memory-bomb",
            lambda b: b.wrap_chain("hoard = bytearray(12 * 2**30)"),
            Expected(Status.GRADED, {CHAIN_TEST}),
        ),
        Case(
            "sys-exit",
            lambda b: b.cell("answer_chain_gradients").__setitem__("source", "import sys\nsys.exit(3)\n"),
            Expected(Status.GRADED, {CHAIN_TEST}),
        ),
        Case(
            "os-exit",
            lambda b: b.wrap_chain("import os\nos._exit(0)"),
            Expected(Status.GRADED, CELLS_AFTER_CHAIN, ("the kernel died while this cell ran",)),
        ),
        Case(
            "segfault",
            lambda b: b.wrap_chain("import faulthandler\nfaulthandler._sigsegv()"),
            Expected(Status.GRADED, CELLS_AFTER_CHAIN, ("the kernel died while this cell ran",)),
        ),
        # Printed in the answer cell: what the kernel prints while answering a test's call is never shown.
        Case(
            "prints-megabytes",
            lambda b: b.cell("answer_chain_gradients").__setitem__(
                "source", b.cell("answer_chain_gradients").source + "\n\nprint('x' * 5_000_000)\n"
            ),
            full,
        ),
        Case(
            "warns-on-stderr",
            lambda b: (
                b.cell("answer_chain_gradients").__setitem__(
                    "source",
                    b.cell("answer_chain_gradients").source
                    + (
                        "\n\nimport sys\nimport warnings\nprint('debugging output', file=sys.stderr)\nwarnings.warn('an answer-cell warning')\n"
                    ),
                ),
                b.wrap_chain("import warnings\nwarnings.warn('a warning on every call')"),
            ),
            full,
        ),
        # Hostile: symbolic links out of the submission folder
        Case(
            "links-to-a-classmates-notebook",
            _links_out,
            Expected(
                Status.GRADED,
                ALL_OF_010,
                (
                    "010_history.ipynb is a symbolic link to '../../honest-student/autograd/010_history.ipynb': refused, not followed; it scores 0",
                    "timestamp.txt is a symbolic link",
                    "course is a symbolic link",
                ),
            ),
        ),
        Case(
            "linked-submission-folder",
            _linked_folder,
            Expected(Status.FAILED, says=("the submission folder is a symbolic link: refused, not followed",)),
        ),
        # Hostile: one kernel leaves a note, or processes, for the next (graded first: the largest submissions)
        Case(
            "writes-a-note-for-the-next-student",
            _leaves_a_note,
            Expected(Status.GRADED, says=("not graded (not part of the assignment): scratch-work.txt",)),
        ),
        Case(
            "leaves-orphan-processes",
            _leaves_orphans,
            Expected(Status.GRADED, says=("not graded (not part of the assignment): scratch-work.txt",)),
        ),
        Case("reads-a-note-from-another-student", _follows_a_note, full),
        # Hostile: the exchange (outside the course folder in the test) holds every student's submission
        Case(
            "copies-from-the-exchange",
            _copies_from_the_exchange,
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("accessed a course file",)),
        ),
        # Hostile: edited tests, points and grade ids (nbgrader restores locked cells)
        Case("edited-test-cell", _edited_test, Expected(Status.GRADED, {CHAIN_TEST})),
        Case("changed-points", _changed_points, Expected(Status.GRADED, {CHAIN_TEST})),
        Case(
            "changed-grade-id", _changed_grade_id, Expected(Status.GRADED, {CHAIN_TEST}, ("had its grade id changed",))
        ),
        # Hostile: monkeypatching what the checks rely on
        Case(
            "patches-torch-allclose",
            lambda b: b.cheat("torch.allclose = lambda *args, **kwargs: True"),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("torch.allclose was replaced",)),
        ),
        Case(
            "patches-assert-close",
            lambda b: b.cheat("import torch.testing\ntorch.testing.assert_close = lambda *args, **kwargs: None"),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("torch.testing.assert_close was replaced",)),
        ),
        Case(
            "patches-torch-equal",
            lambda b: b.cheat("torch.equal = lambda *args, **kwargs: True"),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("torch.equal was replaced",)),
        ),
        Case(
            "patches-numpy-testing",
            lambda b: b.cheat("import numpy\nnumpy.testing.assert_allclose = lambda *args, **kwargs: None"),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("numpy.testing.assert_allclose was replaced",)),
        ),
        Case(
            "patches-isinstance",
            lambda b: b.cheat(
                "import builtins\n_real_isinstance = isinstance\n"
                "builtins.isinstance = lambda obj, kind: True if kind is torch.Tensor else _real_isinstance(obj, kind)"
            ),
            # The patched isinstance also breaks the student's later answers, and the kernel's side of the wire.
            Expected(Status.FLAGGED, CELLS_AFTER_CHAIN, ("builtins.isinstance was replaced",)),
        ),
        Case(
            "patches-assertion-error",
            lambda b: b.cheat("import builtins\nbuiltins.AssertionError = type('AssertionError', (Exception,), {})"),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("builtins.AssertionError was replaced",)),
        ),
        Case(
            "patches-tensor-method",
            lambda b: b.cheat("torch.Tensor.allclose = lambda self, other, *args, **kwargs: True"),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("torch.Tensor.allclose was added",)),
        ),
        Case(
            "patches-comparison-internals",
            lambda b: b.cheat(
                "import torch.testing._comparison as comparison\n"
                "comparison.not_close_error_metas = lambda *args, **kwargs: []"
            ),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("torch.testing._comparison.not_close_error_metas was replaced",)),
        ),
        Case(
            "rewrites-test-cells",
            lambda b: b.cheat(
                "import ast\n\n\nclass DropChecks(ast.NodeTransformer):\n"
                "    def visit_Call(self, node):\n"
                "        if isinstance(node.func, ast.Name) and node.func.id.startswith('expect'):\n"
                "            return ast.Constant(None)\n"
                "        return self.generic_visit(node)\n\n\n"
                "get_ipython().ast_transformers.append(DropChecks())"
            ),
            # The test cells run in the grader: the rewriter never sees them.
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("IPython's ast_transformers were changed",)),
        ),
        Case(
            "leaves-a-torch-mode-active",
            lambda b: b.cheat(
                "from torch.overrides import TorchFunctionMode\n\n\nclass Agreeable(TorchFunctionMode):\n"
                "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
                "        return func(*args, **(kwargs or {}))\n\n\nAgreeable().__enter__()"
            ),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("a torch function mode was left active",)),
        ),
        Case(
            "starts-an-unguarded-process",
            lambda b: b.wrap_chain(
                "import _posixsubprocess, os\n"
                "try:\n"
                "    _posixsubprocess.fork_exec([b'/bin/true'], [b'/bin/true'], True, (), None, None,\n"
                "        -1, -1, -1, -1, -1, -1, *os.pipe(), True, True, -1, None, None, None, -1, None, False)\n"
                "except OSError:\n"
                "    pass"
            ),
            Expected(Status.GRADED),
        ),
        Case(
            "signals-the-grader",
            lambda b: b.wrap_chain(
                "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGSTOP)\nexcept OSError:\n    pass"
            ),
            Expected(Status.FLAGGED, says=("sent a signal to a process",)),
        ),
        Case("signals-the-grader-through-a-pidfd", lambda b: b.wrap_chain(SIGNALS_THROUGH_A_PIDFD), full),
        Case("makes-pipes-in-a-classmates-folder", _makes_pipes_in_a_classmates_folder, full),
        Case("looks-for-its-worker-and-other-kernels", lambda b: b.wrap_chain(LOOKS_FOR_ITS_WORKER), full),
        Case("reads-the-course-paths-from-its-environment", _reads_the_course_paths, full),
        Case("swaps-its-reply-for-a-fifo", lambda b: b.wrap_chain(SWAPS_ITS_REPLY), full),
        Case(
            "reads-another-process",
            lambda b: b.wrap_chain(
                "import os\ntry:\n    open(f'/proc/{os.getppid()}/environ').read()\nexcept OSError:\n    pass"
            ),
            Expected(Status.FLAGGED, says=("looked into another process",)),
        ),
        Case(
            "prints-the-test-cell-source",
            lambda b: b.wrap_chain(
                "import linecache, sys\nframe = sys._getframe(1)\n"
                "while frame.f_code.co_name != '<module>':\n    frame = frame.f_back\n"
                "print(''.join(linecache.getlines(frame.f_code.co_filename)))"
            ),
            # Sealed: the test cell is not in the kernel, so there is nothing to print.
            Expected(Status.GRADED),
        ),
        Case(
            "reaches-for-the-guard",
            lambda b: b.cheat(
                "import sqlite3\nfound = []\ntry:\n    sqlite3.connect(':memory:')\nexcept PermissionError as error:\n"
                "    trace = error.__traceback__\n    while trace is not None:\n"
                "        found += [value for value in trace.tb_frame.f_locals.values() if type(value).__name__ == 'Guard']\n"
                "        trace = trace.tb_next\nprint('guard found:', bool(found))"
            ),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("opened a SQLite database",)),
        ),
        Case(
            "reads-course-files-from-c",
            lambda b: b.cell("answer_chain_gradients").__setitem__(
                "source",
                b.cell("answer_chain_gradients").source
                + (
                    "\n\ntry:\n    torch.from_file('../../../gradebook.db', size=16, dtype=torch.uint8)\n"
                    "    print('read the gradebook')\nexcept RuntimeError:\n    print('the gradebook stayed out of reach')\n"
                ),
            ),
            Expected(Status.GRADED),
        ),
        Case(
            "reads-the-graders-environment-from-c",
            lambda b: b.cell("answer_float64_leaf", "010_history").__setitem__(
                "source", b.cell("answer_float64_leaf", "010_history").source + READS_GRADER_ENVIRONMENT
            ),
            Expected(Status.GRADED),
        ),
        Case(
            "returns-a-forged-tensor",
            lambda b: b.cheat(
                "class Agreeable(torch.Tensor):\n    @classmethod\n"
                "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
                "        return True if func is torch.equal else super().__torch_function__(func, types, args, kwargs)\n\n\n"
                "_real_chain = chain_gradients\n\n\n"
                "def chain_gradients(x):\n    return tuple(t.as_subclass(Agreeable) for t in _real_chain(x))\n"
            ),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("answer_chain_gradients defines __torch_function__",)),
        ),
        Case(
            "answers-with-an-always-equal-object",
            lambda b: b.cell("answer_can_require_grad").__setitem__(
                "source",
                "class Agreeable:\n    def __eq__(self, other):\n        return True\n\n\n"
                "def can_require_grad(dtype):\n    return Agreeable()\n",
            ),
            Expected(Status.FLAGGED, {f"{TARGET}/test_can_require_grad"}, ("answer_can_require_grad defines __eq__",)),
        ),
        Case(
            "sets-a-trace-function",
            lambda b: b.cheat("import sys\nsys.settrace(lambda *args: None)"),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("set a trace function",)),
        ),
        Case(
            "patches-check-helpers",
            lambda b: b.cheat(
                "import autograd_checks\nautograd_checks.expect_close = lambda *args, **kwargs: None\n"
                "expect = lambda *args, **kwargs: None"
            ),
            Expected(
                Status.FLAGGED,
                {CHAIN_TEST},
                (
                    "autograd_checks.expect_close was replaced",
                    "the notebook's name 'expect' no longer refers to what the checks use",
                ),
            ),
        ),
        # Hostile: files that shadow modules, reading and writing course files, importing the reference
        Case(
            "shadowing-files",
            _shadowing_files,
            Expected(
                Status.GRADED,
                says=(
                    "not graded (not part of the assignment): autograd_checks.py, figure.svg, notes.html, numpy.py, torch.py",
                ),
            ),
        ),
        Case(
            "reads-hidden-tests",
            lambda b: b.wrap_chain(
                "try:\n    print(open('../../../source/autograd/020_leaves.ipynb').read()[:2000])\nexcept OSError:\n    pass"
            ),
            Expected(Status.FLAGGED, says=("accessed a course file (020_leaves.ipynb)",)),
        ),
        Case(
            "reads-graded-notebook",
            lambda b: b.wrap_chain(
                "try:\n    print(open('010_history.ipynb').read()[:2000])\nexcept OSError:\n    pass"
            ),
            Expected(Status.FLAGGED, says=("accessed a course file (010_history.ipynb)",)),
        ),
        Case(
            "reads-solutions",
            lambda b: b.wrap_chain(
                f"try:\n    print(open({str(REPO_ROOT / 'solutions' / 'reference' / 'leaves.py')!r}).read())\nexcept OSError:\n    pass"
            ),
            Expected(Status.FLAGGED, says=("accessed a course file (leaves.py)",)),
        ),
        Case("writes-gradebook", _writes_gradebook, Expected(Status.FLAGGED, says=("opened a SQLite database",))),
        Case(
            "imports-reference",
            lambda b: b.wrap_chain(
                f"import sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\ntry:\n    import solutions.reference.leaves\nexcept Exception:\n    pass"
            ),
            Expected(Status.FLAGGED, says=("accessed a course file",)),
        ),
        # Hostile: hiding a failure by patching IPython's traceback machinery
        Case(
            "hides-tracebacks",
            lambda b: b.cheat("get_ipython().showtraceback = lambda *args, **kwargs: None"),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("the IPython shell's showtraceback was replaced",)),
        ),
        # Hostile: attacks on the grade itself, which sealed grading decides outside the kernel
        Case(
            "forges-kernel-replies",
            _in_010(WRONG_010, FORGES_REPLIES),
            Expected(Status.FLAGGED, ALL_OF_010, ("showtraceback was replaced",), attacked="010_history"),
        ),
        Case(
            "toggles-comparisons-around-the-probe",
            _in_010(WRONG_010, TOGGLES_COMPARISONS),
            Expected(
                Status.FLAGGED,
                ALL_OF_010,
                ("the answer added an audit hook (refused: sys.addaudithook)",),
                attacked="010_history",
            ),
        ),
        Case(
            "answers-the-probe-with-its-own-audit-hook",
            lambda b: b.cheat(ANSWERS_THE_PROBE),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("the answer added an audit hook (refused: sys.addaudithook)",)),
        ),
        Case(
            "redirects-the-guards-log",
            lambda b: b.cheat(REDIRECTS_THE_GUARDS_LOG),
            Expected(
                Status.FLAGGED,
                {CHAIN_TEST},
                ("the integrity check got no answer after test_chain_gradients",),
            ),
        ),
        Case(
            "forges-the-guards-log",
            lambda b: b.cheat(FORGES_THE_GUARDS_LOG),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("the guard's log holds an answer that names another file",)),
        ),
        Case("reads-the-test-from-the-kernel", _in_010(READS_THE_TEST), Expected(Status.GRADED, ALL_OF_010)),
        Case(
            "leaks-what-the-test-sends",
            _leaks_what_the_test_sends,
            Expected(
                Status.GRADED,
                {CHAIN_TEST},
                hides_the_tests=True,
                shows=("chain_gradients raised ValueError", "_note_delivery"),  # it did read what the test sent
            ),
        ),
        Case(
            "calls-the-hook-by-hand",
            lambda b: b.cell("answer_square_sum_grad", "010_history").__setitem__("source", HOOK_BY_HAND_010),
            Expected(
                Status.FLAGGED,
                {"010_history/test_square_sum_grad"},
                ("test_square_sum_grad scored 0", "outside any backward pass"),
                attacked="010_history",
            ),
        ),
        Case(
            "calls-the-chain-hook-by-hand",
            lambda b: b.cell("answer_chain_gradients").__setitem__("source", HOOK_BY_HAND_020),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("test_chain_gradients scored 0", "outside any backward pass")),
        ),
        Case(
            "pops-the-element-budget",
            lambda b: b.cell("answer_vjp", "021_cotangents").__setitem__("source", POPS_THE_WATCH),
            Expected(
                Status.FLAGGED,
                {"021_cotangents/test_vjp"},
                ("test_vjp scored 0", "took the grader's watch off"),
                attacked="021_cotangents",
            ),
        ),
        Case(
            "replaces-the-answering-function",
            _in_010(WRONG_010, "import builtins\nbuiltins.__kit_answer__ = lambda: None\n"),
            Expected(
                Status.FLAGGED,
                ALL_OF_010,
                ("the kernel's answer to test_float64_leaf could not be read",),
                attacked="010_history",
            ),
        ),
        Case(
            "rewrites-the-tests-input",
            lambda b: b.cell("answer_square_sum_grad", "010_history").__setitem__("source", REWRITES_THE_TESTS_INPUT),
            Expected(
                Status.FLAGGED,
                {"010_history/test_square_sum_grad"},
                ("while test_square_sum_grad ran, the kernel tried to change the values of a tensor the test made",),
                attacked="010_history",
            ),
        ),
        Case(
            "compares-loosely",
            lambda b: b.cell("answer_why_grad_is_none").__setitem__("source", LOOSE_LABEL),
            Expected(Status.FLAGGED, {f"{TARGET}/test_why_grad_is_none"}, ("answer_why_grad_is_none defines __eq__",)),
        ),
        Case(
            "patches-shell-class",
            lambda b: b.cheat(
                "from IPython.core.interactiveshell import InteractiveShell\n"
                "InteractiveShell.showtraceback = lambda *args, **kwargs: None\n"
                "InteractiveShell._showtraceback = lambda *args, **kwargs: None"
            ),
            Expected(Status.FLAGGED, {CHAIN_TEST}, ("InteractiveShell.showtraceback was replaced",)),
        ),
        # Every reply bounded while it is read
        Case(
            "writes-a-reply-that-never-finishes-decoding",
            _in_010(WRONG_010, ENDLESS_REPLY),
            Expected(Status.FLAGGED, ALL_OF_010, ("reply too large",), attacked="010_history"),
        ),
        # Every output bounded, of every MIME type
        Case(
            "displays-huge-images",
            lambda b: b.cell("answer_chain_gradients").__setitem__(
                "source", b.cell("answer_chain_gradients").source + HUGE_DISPLAYS
            ),
            Expected(Status.GRADED, shows=("image/png) of 33,333,336 bytes cut by the grader",)),
        ),
        Case(
            "displays-one-gigantic-output",
            lambda b: b.cell("answer_chain_gradients").__setitem__(
                "source", b.cell("answer_chain_gradients").source + GIGANTIC_DISPLAY
            ),
            Expected(Status.GRADED, shows=("text/plain) of 80,000,000 bytes cut by the grader",)),
        ),
        # The mailbox: a capped file system, read-only by two layers.
        *mailbox_cases(),
        # The kernel's whole process tree: no child process at all, and every task and byte counted.
        *process_tree_cases(),
    )


# The kernel's folder on the grader's disk: capped in size, read-only by the mounts as well as Landlock.
RESERVES_DISK_PAST_ITS_GUARD_LOG = (
    GUARD_LOG_DESCRIPTORS
    + f"""
_log = _guard_logs()[0]
_kept = os.dup(_log)
try:
    os.posix_fallocate(_kept, os.fstat(_kept).st_size, 2 * 2**30)
    _reserved = 'reserved'
except OSError:
    _reserved = 'refused'
_chunk = (' ' * 2**20 + '\\n').encode()
_written = 0
try:
    while _written < 2 * {KERNEL_FILE_BYTES}:
        _written += os.write(_kept, _chunk)
except OSError:
    pass
_held = max(os.fstat(_kept).st_size, os.fstat(_kept).st_blocks * 512)
print('fallocate', _reserved, '; the guard log holds', 'under the cap' if _held <= {KERNEL_FILE_BYTES} else 'too much')
"""
)
WRITES_THROUGH_THE_HANDOFF_FOLDER = """
import os

_done = []
for _name, _try in (
    ('write', lambda: open('/kit/mailbox/reply', 'w').write('an answer of my own')),
    ('create', lambda: open('/kit/mailbox/extra', 'w')),
    ('create-top', lambda: open('/kit/extra', 'w')),
    ('rename', lambda: os.rename('/kit/mailbox/reply', '/kit/mailbox/old')),
    ('remove', lambda: os.unlink('/kit/mailbox/guard.jsonl')),
    ('fifo', lambda: os.mkfifo('/kit/mailbox/pipe')),
    ('folder', lambda: os.mkdir('/kit/more')),
):
    try:
        _try()
        _done.append(_name)
    except OSError:
        pass
print('through the handoff folder:', ' '.join(_done) or 'nothing done')
"""


def mailbox_cases() -> tuple[Case, ...]:
    return (
        Case(
            "reserves-disk-past-its-guard-log",
            lambda b: b.cell("answer_chain_gradients").__setitem__(
                "source", b.cell("answer_chain_gradients").source + "\n\n" + RESERVES_DISK_PAST_ITS_GUARD_LOG
            ),
            Expected(
                Status.FLAGGED,
                frozenset(),  # the reference answers, withheld for a TA: the guard noticed its log grown
                ("the guard's log is larger than 16 MiB (read that far)",),
                shows=("fallocate refused ; the guard log holds under the cap",),
            ),
        ),
        Case(
            "writes-through-the-handoff-folder",
            lambda b: b.cell("answer_chain_gradients").__setitem__(
                "source", b.cell("answer_chain_gradients").source + "\n\n" + WRITES_THROUGH_THE_HANDOFF_FOLDER
            ),
            Expected(Status.GRADED, shows=("through the handoff folder: nothing done",)),
        ),
    )


def build_case(course: Course, manifest: Manifest, case: Case) -> None:
    builder = Builder(course, manifest, course.submitted_dir / case.name / course.assignment_id)
    case.build(builder)
    builder.write()


def full_marks(manifest: Manifest) -> dict[str, float]:
    """Full marks of every graded cell of the case notebooks, as "<notebook>/<grade id>"."""
    return {f"{name}/{test.cell}": test.points for name in NOTEBOOKS for test in manifest.test_cells_of(name)}


# Spins while sending the grader shell messages that answer nothing, ten a second: the cell's clock is
# read on its own schedule all the same, so the cell ends at its CPU limit.
FLOODS_UNASKED_REPLIES = """
_kernel = get_ipython().kernel
if getattr(_kernel, "_supports_kernel_subshells", False):
    _socket = _kernel.shell_channel_thread.manager.get_subshell_to_shell_channel_socket(None)
else:
    _socket = _kernel.shell_stream
_unasked = {"header": {"msg_id": "noise", "msg_type": "noise", "session": "x", "username": "x", "date": "",
                       "version": "5.3"}}
import time
while True:
    _kernel.session.send(_socket, "noise", {}, parent=_unasked, ident=_kernel._parent_ident["shell"])
    _until = time.process_time() + 0.1
    while time.process_time() < _until:
        pass
"""


# Children forked without exec, each filling memory: through fork_exec with a preexec_fn (no audit
# event; the seccomp filter refuses the fork itself) and through libc's fork by ctypes (the guard refuses it).
FORKS_CHILDREN_THAT_FILL_MEMORY = """
import _posixsubprocess, os, time


def _fill():
    _hoard = bytearray(2 * 2**30)
    time.sleep(60)
    os._exit(0)


_started = _refused = 0
for _ in range(4):
    try:
        _posixsubprocess.fork_exec([b'/bin/true'], [b'/bin/true'], True, (), None, None, -1, -1, -1, -1,
            -1, -1, *os.pipe(), True, False, -1, None, None, None, -1, _fill, False)
        _started += 1
    except OSError:
        _refused += 1
try:
    import ctypes
    ctypes.CDLL(None).fork()
    _by_ctypes = 'forked'
except (OSError, PermissionError):
    _by_ctypes = 'refused'
with open('/proc/self/status') as _status:
    _peak = int(next(line for line in _status if line.startswith('VmHWM')).split()[1]) * 1024
print(f'children started {_started}, refused {_refused}; ctypes fork {_by_ctypes};',
      'peak', 'under the cap' if _peak < int(2**30) else 'too much')
"""
FORK_BOMB = """
import _posixsubprocess, os


def _bomb():
    while True:
        try:
            _posixsubprocess.fork_exec([b'/bin/true'], [b'/bin/true'], True, (), None, None, -1, -1, -1, -1,
                -1, -1, *os.pipe(), True, False, -1, None, None, None, -1, _bomb, False)
        except OSError:
            os._exit(0)


_started = _refused = 0
for _ in range(200):
    try:
        _posixsubprocess.fork_exec([b'/bin/true'], [b'/bin/true'], True, (), None, None, -1, -1, -1, -1,
            -1, -1, *os.pipe(), True, False, -1, None, None, None, -1, _bomb, False)
        _started += 1
    except OSError:
        _refused += 1
print(f'fork bomb: {_started} started, {_refused} refused')
"""
# Threads with small stacks, so that the address-space cap is no bound; each waits for ever.
STARTS_THREADS_WITHOUT_END = """
import threading

threading.stack_size(64 * 1024)
_never = threading.Event()
_threads = 0
try:
    while _threads < 5000:
        threading.Thread(target=_never.wait, daemon=True).start()
        _threads += 1
    print('threads: 5000 started')
except RuntimeError:
    print('threads: the system refused one after', 'a few hundred' if _threads < 1000 else 'thousands')
"""


def process_tree_cases() -> tuple[Case, ...]:
    """The kernel starts no process (seccomp); its threads and memory are held by its cgroup where one is made."""
    no_group = kernel_cgroups.unavailable_reason()

    def appended(code: str) -> Callable[[Builder], None]:
        return lambda b: b.cell("answer_chain_gradients").__setitem__(
            "source", b.cell("answer_chain_gradients").source + "\n\n" + code
        )

    stated = (f"graded without a cgroup on each kernel's process tree ({no_group})",) if no_group else ()
    threads = (
        stated
        if no_group
        else (f"answer_chain_gradients started too many processes or threads: past {kernel_cgroups.KERNEL_TASKS}",)
    )
    return (
        Case(
            "forks-children-that-fill-memory",
            appended(FORKS_CHILDREN_THAT_FILL_MEMORY),
            Expected(
                Status.FLAGGED,
                frozenset(),  # the reference answers, withheld for a TA: the guard refused ctypes
                ("used ctypes (raw memory access)", *stated),
                shows=("children started 0, refused 4; ctypes fork refused; peak under the cap",),
            ),
        ),
        Case(
            "fork-bomb",
            appended(FORK_BOMB),
            Expected(Status.GRADED, says=stated, shows=("fork bomb: 0 started, 200 refused",)),
        ),
        Case(
            "starts-threads-without-end",
            appended(STARTS_THREADS_WITHOUT_END),
            Expected(
                Status.GRADED,
                says=threads,
                shows=() if no_group else ("threads: the system refused one after a few hundred",),
            ),
        ),
    )
