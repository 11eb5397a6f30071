"""A warm parent for grading kernels: it imports the heavy modules once, then forks a kernel per request.

This file runs as its own program (`python -c <this source>`), never as part of
the gradekit package, so nothing of the repository is importable in the
kernels it forks. Protocol, one JSON object per line:
  stdin  <- {"argv": [...], "cwd": "...", "env": {...}, "kernel_dir": "path",
             "box": "path", "tmp_bytes": n, "keep": ["path", ...], "guard": "path", "answer_server": "path",
             "request": "path", "reply": "path", "bell": "path", "answered": "path", "compiles": true}
                                                                   start `python -m ipykernel_launcher ...`
  stdout -> {"pid": 1234} or {"error": "..."}
  stdin  <- {"ended": 1234}   stdout -> {"status": wait status or null}
  stdin  <- {"clear": true, "echo": x}   stdout -> {"cleared": n, "live": k, "echo": x}
                                         kill what finished kernels left running; k kernels still run
It exits when its stdin closes. Children are reaped as soon as they end. With
"box", the kernel first boxes itself around "kernel_dir" (kernel_box.py), keeping
the read-only views "keep" that its fresh /tmp would hide; a
kernel whose environment sets KIT_KERNEL_MEMORY_BYTES gets that address-space
limit; with "guard", the kernel installs that guard (kernel_guard.py) before
any cell runs; with "answer_server", it answers the grader's calls
(answer_server.py), reading "request" and writing "reply" each time "bell" rings, and
saying so through "answered"; with "compiles", this process imports what torch.compile needs
first (COMPILE_STACK), once.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import resource
import runpy
import signal
import sys
from typing import TYPE_CHECKING

# Only in the warm parent itself (run as a program), never in a process importing this file for its names:
if __name__ == "__main__":
    # Nearly everything the imports below make lives as long as this process: the collections they
    # would set off on the way only walk it again and again (about 15% of the imports' CPU, paid by
    # every warm parent). settle_imports() freezes what they made, then collects as usual.
    gc.disable()
    # This process imports nothing from the folder Python put first on its path: for `python -c`,
    # its working folder, the root of its box, a file system its kernels' boxes share. It still
    # imports after kernels have run (COMPILE_STACK, a changed file's imports), so a module a kernel
    # left there would run here, in every later kernel's parent. Each kernel puts its notebook's
    # folder first instead (become_kernel), as Python would have.
    if not sys.flags.safe_path:
        del sys.path[0]

# What every notebook of the course imports: paid for once, shared by all forks.
# (Not ipykernel.kernelapp: its defaults read the environment at import time,
# so each kernel imports that small module itself, after its environment is set.)
import ipykernel.ipkernel
import numpy  # noqa: F401
import numpy.testing  # noqa: F401  (the grading guard watches it)
import torch  # noqa: F401
import torch._dynamo  # noqa: F401  (an optimizer, torch.func and the checks refusing autograd import it: 0.75 s)
import torch._subclasses.schema_check_mode  # noqa: F401  (the answer server's first call: 3 ms a kernel)
import torch.nn.functional  # noqa: F401
import torch.testing  # noqa: F401
import torch.utils.serialization  # noqa: F401  (torch.load's settings, read at its first call: 3 ms a kernel)

# Every kernel builds its debugger at start, importing debugpy: about 0.1 s per
# notebook. Importing it here starts no thread and sets no trace; its one-time
# note about frozen modules would only clutter the grader's terminal.
with contextlib.redirect_stderr(io.StringIO()):
    import ipykernel.debugger  # noqa: F401

# What a kernel's start imports beyond that (about 60 ms per notebook): none of these reads
# the environment when imported (psutil lists the addresses a connection file may name).
import faulthandler  # noqa: F401
import pdb  # noqa: F401
import sqlite3  # noqa: F401

import ipykernel.control  # noqa: F401
import ipykernel.heartbeat  # noqa: F401
import ipykernel.parentpoller  # noqa: F401
import ipykernel.shellchannel  # noqa: F401
import IPython.core.application  # noqa: F401
import IPython.core.completerlib  # noqa: F401
import IPython.core.crashhandler  # noqa: F401
import IPython.core.debugger  # noqa: F401
import IPython.core.logger  # noqa: F401  (a kernel's first cell imports it)
import IPython.core.oinspect  # noqa: F401
import IPython.core.shellapp  # noqa: F401
import IPython.extensions.storemagic  # noqa: F401
import IPython.terminal.pt_inputhooks  # noqa: F401
import psutil  # noqa: F401
import tornado.platform.asyncio  # noqa: F401
import zmq

if TYPE_CHECKING:
    from types import FrameType
    from typing import Any, NoReturn

# What a first torch.compile(backend="aot_eager") imports beyond the above: about 0.8 s of CPU. This
# process imports it when the first kernel that will compile asks to be forked, and keeps it for
# every kernel after that one; a run whose notebooks never compile (most runs of one notebook) goes
# without. A kernel that compiles unannounced imports it itself, as any kernel imports what it needs.
COMPILE_STACK = (
    "networkx",
    "torch._dynamo.backends.debugging",
    "torch._functorch.aot_autograd",
    "torch._inductor.fx_passes.joint_graph",
)
COMPILE_STACK_TRIED = False

# A graded kernel keeps no history database: no SQLite file and no saving thread per notebook
# (IPython still keeps the inputs in memory, so `In` and `_ih` work as ever).
KERNEL_OPTIONS = ["--HistoryManager.enabled=False"]


# The grader declares each kernel's address-space limit (bytes) in its environment.
MEMORY_LIMIT_VARIABLE = "KIT_KERNEL_MEMORY_BYTES"


# How each reaped kernel ended (its wait status), until the grader asks: a kernel
# killed by SIGKILL was most likely killed from outside, which the grader retries.
ENDED: dict[int, int] = {}
LIVE: set[int] = set()  # kernels forked and not yet reaped
BOX_FAILED = 70  # the exit code of a kernel that could not box itself


# The files every kernel loads by path (its box, answer server and guard, and what they load in turn),
# run once here and kept: (path, run name) -> (the file's content, what running it defined). A kernel
# forked after that starts with their code compiled and their definitions made, shared with this process.
# A changed file among the three is run again; a file they load in turn (the wire, Landlock's and
# seccomp's modules) is read when they are, so it changes with a new warm parent: one per process that
# grades (kept from one run to the next), whose own copies of those modules do not change either.
LOADED: dict[tuple[str, str], tuple[bytes, dict[str, Any]]] = {}
RUN_NAMES = {"box": "kit_kernel_box", "answer_server": "kit_answer_server", "guard": "kit_kernel_guard"}


def load_kernel_files(request: dict[str, Any]) -> None:
    """Run the files `request` names for its kernel, unless this process ran them as they are now."""
    for key, run_name in RUN_NAMES.items():
        path = request.get(key)
        if not path:
            continue
        try:
            with open(path, "rb") as source:
                content = source.read()
            kept = LOADED.get((path, run_name))
            if kept is None or kept[0] != content:
                LOADED[(path, run_name)] = (content, runpy.run_path(path, run_name=run_name))
                gc.freeze()  # as the imports: no kernel's collector walks them
        except Exception:  # the kernel loads it itself, and fails as it would have without this
            LOADED.pop((path, run_name), None)


def kernel_file(request: dict[str, Any], key: str) -> dict[str, Any]:
    """What running the file `request[key]` defines: this process's run of it, else a run of its own."""
    path, run_name = request[key], RUN_NAMES[key]
    kept = LOADED.get((path, run_name))
    return kept[1] if kept else runpy.run_path(path, run_name=run_name)


class ModuleFile:
    """One imported module's file, as IPythonKernel's listing of modules reads it."""

    __slots__ = ("__file__",)

    def __init__(self, path: str):
        self.__file__ = path


class SysWithListedModules:
    """What `ipykernel.ipkernel` sees as `sys`: the real one, except `modules`, a table of this process's module files.

    IPythonKernel's start lists the file of every module in `sys.modules` for its debugger. In a
    forked kernel that walk writes a reference count into every module object, name and path this
    process made, and each write copies the page of memory it shares with this process: about
    5,000 copies and 18 ms of CPU a kernel. The table is made here once, its entries side by side
    in memory, so the kernel's walk copies a few dozen pages and lists the same files (but for what
    the kernel imports after its fork). `sys.modules` itself stays whole, for imports and for the
    guard; ipkernel reads nothing else of `modules` (a test keeps it so).
    """

    def __init__(self, real: Any):
        self._real = real
        files = [module.__file__ for module in list(real.modules.values()) if getattr(module, "__file__", None)]
        # Fresh copies of names and paths, made one after another: they share pages with nothing older.
        self.modules = {str(index): ModuleFile(path.encode().decode()) for index, path in enumerate(files)}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def compact_module_names() -> None:
    """Key `sys.modules` by fresh copies of the module names, made one after another.

    The guard lists every module's name at arming (kernel_guard.py): in a forked kernel that writes
    a reference count into each name, and the names this process made while importing lie on
    some 1,600 pages of memory it shares with its kernels, each then copied (about 6 ms a
    kernel). Side by side, the copies fill a few dozen. The modules, their order and every lookup
    stay as they were; only the key objects are new.
    """
    for name in list(sys.modules):
        module = sys.modules.pop(name)
        sys.modules[name.encode().decode()] = module


def settle_imports() -> None:
    """Make what this process imported cheap to share with every kernel forked after this, and collect again."""
    ipykernel.ipkernel.sys = SysWithListedModules(sys)  # type: ignore[assignment]
    compact_module_names()
    # What the imports made is never collected: each kernel's collector skips it, and so never
    # touches (and copies) those pages of memory it shares with this process.
    gc.freeze()
    gc.enable()  # for this process and every kernel forked from it


def import_compile_stack() -> None:
    """COMPILE_STACK, imported once, before the first kernel that compiles is forked (tried once: a
    module that fails to import here is the kernel's to import, and fail, itself)."""
    global COMPILE_STACK_TRIED
    if COMPILE_STACK_TRIED:
        return
    COMPILE_STACK_TRIED = True
    gc.disable()  # as for the first imports
    for name in COMPILE_STACK:
        with contextlib.suppress(Exception):  # the kernel imports it itself, and fails as it would have without this
            importlib.import_module(name)
    settle_imports()


def reap_children(signum: int, frame: FrameType | None) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in LIVE:  # orphans the zygote adopted (as PID 1 of its box) are reaped, not recorded
            LIVE.discard(pid)
            ENDED[pid] = status


def become_kernel(request: dict[str, Any]) -> NoReturn:
    """In the forked child: look exactly like `python -m ipykernel_launcher` started in `cwd`."""
    os.setsid()  # its own process group, so signals to the kernel spare the zygote
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a kernel started the usual way has it
    # The kernel's own process output (start-up notes, not cell output) would
    # flood the grader's terminal, one copy per notebook: discard it.
    devnull = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(devnull, stream)
    cwd = request["cwd"]
    if request.get("box"):
        try:
            enter = kernel_file(request, "box")["enter"]
            keep = request.get("keep", ())
            cwd, sockets = enter(request["kernel_dir"], request["tmp_bytes"], cwd, keep, request.get("file_bytes"))
            serve_on_bound_sockets(sockets)
        except Exception:
            os._exit(BOX_FAILED)
    limit = request["env"].get(MEMORY_LIMIT_VARIABLE)
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(request["env"])
    if not sys.flags.safe_path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: the notebook's folder first
    sys.argv = ["ipykernel_launcher", *request["argv"], *KERNEL_OPTIONS]
    if request.get("answer_server"):  # before the guard: its file lies where the guard forbids reading
        server = kernel_file(request, "answer_server")
        server["install"](request["request"], request["reply"], request["bell"], request["answered"])
    if request.get("guard"):
        kernel_file(request, "guard")["install"]()
    LOADED.clear()  # the kernel's copy: what it installed keeps its own globals, and no cell finds the guard's here
    try:
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
    finally:
        os._exit(0)


def serve_on_bound_sockets(sockets: dict[str, int]) -> None:
    """ipykernel binds its sockets by address: zmq takes the descriptor the box bound there instead.

    The box's socket folder is read-only by then, so a bind of zmq's own would fail.
    """
    if not sockets:
        return
    bind = zmq.Socket.bind

    def bind_bound(zmq_socket: zmq.Socket, address: str) -> object:
        descriptor = sockets.pop(address, None)
        if descriptor is not None:
            zmq_socket.setsockopt(zmq.USE_FD, descriptor)
        return bind(zmq_socket, address)

    zmq.Socket.bind = bind_bound  # type: ignore[method-assign,assignment]  # the forked kernel's own zmq


def clear_leftovers() -> int:
    """Kill every process of this box that no live kernel leads: what finished kernels left behind.

    Only PID 1 of a box of its own does this (a zygote outside a box would see the whole machine).
    """
    if os.getpid() != 1:
        return 0
    killed = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == 1:
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                session = int(stat.read().rsplit(")", 1)[1].split()[3])
        except (OSError, IndexError, ValueError):
            continue
        if session not in LIVE:
            with contextlib.suppress(OSError):
                os.kill(int(entry), signal.SIGKILL)
                killed += 1
    return killed


def serve() -> None:
    signal.signal(signal.SIGCHLD, reap_children)
    # PID 1 of its box takes from inside the box only the signals it handles: not SIGINT, which
    # would end it (and every kernel of its worker) as a KeyboardInterrupt. SIGCHLD only reaps.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    settle_imports()
    replies = sys.stdout
    print(json.dumps({"ready": True}), file=replies, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if "ended" in request:  # how a kernel ended, asked once it is gone
            print(json.dumps({"status": ENDED.pop(request["ended"], None)}), file=replies, flush=True)
            continue
        if "clear" in request:
            cleared = {"cleared": clear_leftovers(), "live": len(LIVE), "echo": request.get("echo")}
            print(json.dumps(cleared), file=replies, flush=True)
            continue
        if request.get("compiles"):
            import_compile_stack()
        load_kernel_files(request)
        # Blocked until the child is known as live: a kernel that ends at once is still recorded.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        try:
            pid = os.fork()
        except OSError as error:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            print(json.dumps({"error": str(error)}), file=replies, flush=True)
            continue
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            become_kernel(request)
        LIVE.add(pid)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        print(json.dumps({"pid": pid}), file=replies, flush=True)


if __name__ == "__main__":
    serve()
