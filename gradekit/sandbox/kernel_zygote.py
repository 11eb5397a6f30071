"""A warm parent for grading kernels: it imports the heavy modules once, then forks a kernel per request.

This file runs as its own program (`python -c <this source>`), never as part of
the gradekit package, so nothing of the repository is importable in the
kernels it forks. Protocol, one JSON object per line:
  stdin  <- {"argv": [...], "cwd": "...", "env": {...}, "guard": "path",
             "answer_server": "path", "private_tmp": "path"}       start `python -m ipykernel_launcher ...`
  stdout -> {"pid": 1234} or {"error": "..."}
It exits when its stdin closes. Children are reaped as soon as they end. A
kernel whose environment sets KIT_KERNEL_MEMORY_BYTES gets that address-space
limit; with "guard", the kernel installs that guard (kernel_guard.py) before
any cell runs; with "answer_server", it answers the grader's calls
(answer_server.py) through files in "private_tmp".
"""

import contextlib
import io
import json
import os
import resource
import runpy
import signal
import sys

# What every notebook of the course imports: paid for once, shared by all forks.
# (Not ipykernel.kernelapp: its defaults read the environment at import time,
# so each kernel imports that small module itself, after its environment is set.)
import ipykernel.ipkernel  # noqa: F401

# What a first torch.compile(backend="aot_eager") imports: about 0.9 s per notebook that compiles.
import networkx  # noqa: F401
import numpy  # noqa: F401
import numpy.testing  # noqa: F401  (the grading guard watches it)
import torch  # noqa: F401
import torch._dynamo  # noqa: F401  (torch.testing.assert_close pulls it in on first use: about 0.5 s)
import torch._dynamo.backends.debugging  # noqa: F401
import torch._functorch.aot_autograd  # noqa: F401
import torch._inductor.fx_passes.joint_graph  # noqa: F401
import torch.nn.functional  # noqa: F401
import torch.testing  # noqa: F401

# Every kernel builds its debugger at start, importing debugpy: about 0.1 s per
# notebook. Importing it here starts no thread and sets no trace; its one-time
# note about frozen modules would only clutter the grader's terminal.
with contextlib.redirect_stderr(io.StringIO()):
    import ipykernel.debugger  # noqa: F401


# The grader declares each kernel's address-space limit (bytes) in its environment.
MEMORY_LIMIT_VARIABLE = "KIT_KERNEL_MEMORY_BYTES"


# How each reaped kernel ended (its wait status), until the grader asks: a kernel
# killed by SIGKILL was most likely killed from outside, which the grader retries.
ENDED: dict[int, int] = {}


def reap_children(signum, frame):
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ENDED[pid] = status


def become_kernel(request):
    """In the forked child: look exactly like `python -m ipykernel_launcher` started in `cwd`."""
    os.setsid()  # its own process group, so signals to the kernel spare the zygote
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # The kernel's own process output (start-up notes, not cell output) would
    # flood the grader's terminal, one copy per notebook: discard it.
    devnull = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(devnull, stream)
    limit = request["env"].get(MEMORY_LIMIT_VARIABLE)
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = os.getcwd()
    sys.argv = ["ipykernel_launcher", *request["argv"]]
    if request.get("answer_server"):  # before the guard: its file lies where the guard forbids reading
        runpy.run_path(request["answer_server"], run_name="kit_answer_server")["install"](request["private_tmp"])
    if request.get("guard"):
        runpy.run_path(request["guard"], run_name="kit_kernel_guard")["install"]()
    try:
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
    finally:
        os._exit(0)


def serve():
    signal.signal(signal.SIGCHLD, reap_children)
    replies = sys.stdout
    print(json.dumps({"ready": True}), file=replies, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if "ended" in request:  # how a kernel ended, asked once it is gone
            print(json.dumps({"status": ENDED.pop(request["ended"], None)}), file=replies, flush=True)
            continue
        try:
            pid = os.fork()
        except OSError as error:
            print(json.dumps({"error": str(error)}), file=replies, flush=True)
            continue
        if pid == 0:
            become_kernel(request)
        print(json.dumps({"pid": pid}), file=replies, flush=True)


if __name__ == "__main__":
    serve()
