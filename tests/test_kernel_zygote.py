"""The kernels' warm parent: a forked kernel looks like one started the usual way, keeps its memory limit, leads its
own group and leaves nothing running; and the parent's own protocol (fork, how a kernel ended, clearing leftovers)."""

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from gradekit.core.course import REPO_ROOT
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.grading import warm_kernels
from gradekit.grading.warm_kernels import WarmKernelManager
from gradekit.sandbox.kernel_zygote import COMPILE_STACK

pytestmark = pytest.mark.notebook


PROBE = """
import gc, json, os, sys
try:
    import solutions
    reachable = True
except ImportError:
    reachable = False
print(json.dumps({
    "path0": sys.path[0], "cwd": os.getcwd(), "marker": os.environ.get("PROBE_MARKER"),
    "pid": os.getpid(), "solutions": reachable, "argv0": os.path.basename(sys.argv[0]),
    "collecting": gc.isenabled(), "repo_on_path": any(os.path.realpath(p) == os.path.realpath(%r) for p in sys.path),
}))
""" % str(REPO_ROOT)


def _probe(manager_class, folder, code=PROBE):
    """What a cell of `code` printed (one JSON object), run in a kernel of `manager_class` started in `folder`."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    env = dict(grading_environment(), PROBE_MARKER="from-the-grader")
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        kernel_manager_class=manager_class,
        resources={"metadata": {"path": str(folder)}},
        timeout=60,
    )
    with client.setup_kernel(env=env):
        client.execute_cell(notebook.cells[0], 0)
    return json.loads(notebook.cells[0].outputs[0]["text"])


def test_forked_kernel_matches_a_normal_kernel(tmp_path):
    normal = _probe(AsyncKernelManager, tmp_path)
    first = _probe(WarmKernelManager, tmp_path)
    second = _probe(WarmKernelManager, tmp_path)
    for key in ("path0", "cwd", "marker", "solutions", "argv0", "repo_on_path", "collecting"):
        assert first[key] == normal[key], key
    assert first["cwd"] == str(tmp_path) and first["marker"] == "from-the-grader"
    assert first["collecting"]  # the parent imports with its collector off, and turns it on before any fork
    assert not first["solutions"] and not first["repo_on_path"]
    # Every notebook gets a process of its own.
    assert len({first["pid"], second["pid"], os.getpid()}) == 3


def test_a_memory_bomb_fails_its_cell_and_the_kernel_lives_on(tmp_path):
    bomb = nbformat.v4.new_code_cell("import torch\nhog = torch.empty(40 * 2**30, dtype=torch.uint8)")
    after = nbformat.v4.new_code_cell("print('still here')")
    notebook = nbformat.v4.new_notebook(cells=[bomb, after])
    env = dict(grading_environment(), KIT_KERNEL_MEMORY_BYTES=str(4 * 2**30))
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        kernel_manager_class=WarmKernelManager,
        resources={"metadata": {"path": str(tmp_path)}},
        timeout=60,
        allow_errors=True,
    )
    with client.setup_kernel(env=env):
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
    (error,) = [o for o in bomb.outputs if o.output_type == "error"]
    assert "memory" in (error.ename + error.evalue).lower()
    assert after.outputs[0]["text"].strip() == "still here"


# A child that forks again and exits: the grandchild is an orphan the kernel no longer knows,
# deaf to the interrupt jupyter_client sends the group at shutdown.
LEAVES_AN_ORPHAN = """
import json, os, signal, time
read_end, write_end = os.pipe()
child = os.fork()
if child == 0:
    orphan = os.fork()
    if orphan == 0:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel's interrupt reaches its whole group
        time.sleep(600)
        os._exit(0)
    os.write(write_end, str(orphan).encode())
    os._exit(0)
os.waitpid(child, 0)
orphan = int(os.read(read_end, 32))
print(json.dumps({"kernel": os.getpid(), "group": os.getpgrp(), "orphan": orphan, "orphan_group": os.getpgid(orphan)}))
"""


def _descendants(pid):
    """Every process below `pid`, as this machine sees them."""
    found, pending = [], [pid]
    while pending:
        parent = pending.pop()
        try:
            children = [int(c) for c in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
        except OSError:
            continue
        found += children
        pending += children
    return found


@pytest.mark.parametrize("new_session", [False, True], ids=["in-its-group", "in-a-session-of-its-own"])
def test_a_kernel_leads_its_own_group_and_leaves_nothing_running(tmp_path, new_session):
    """A process forked without exec (an unguarded kernel may fork, even leave its group) does not outlive its kernel."""
    source = LEAVES_AN_ORPHAN.replace("    orphan = os.fork()", "    os.setsid()\n    orphan = os.fork()")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source if new_session else LEAVES_AN_ORPHAN)])
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        kernel_manager_class=WarmKernelManager,
        resources={"metadata": {"path": str(tmp_path)}},
        timeout=60,
    )
    with client.setup_kernel(env=grading_environment()):
        client.execute_cell(notebook.cells[0], 0)
        zygote = warm_kernels.zygote()
        assert len(_descendants(zygote.host_pid)) >= 2  # the kernel and its orphan, in the zygote's box
    seen = json.loads(notebook.cells[0].outputs[0]["text"])
    assert seen["group"] == seen["kernel"] != os.getpgrp()
    assert (seen["orphan_group"] == seen["kernel"]) is not new_session
    deadline = time.monotonic() + 10
    while _descendants(zygote.host_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _descendants(zygote.host_pid) == []


ZYGOTE = Path(__file__).resolve().parent.parent / "gradekit" / "sandbox" / "kernel_zygote.py"
FAILING_BOX = "def enter(*args):\n    raise OSError('no box here')\n"


@contextlib.contextmanager
def _warm_parent(program=(sys.executable, str(ZYGOTE)), cwd="/"):
    """The zygote as its own program, ready; yields how to ask it (one request, its one reply). Ends cleanly."""
    pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    parent = subprocess.Popen(list(program), cwd=cwd, env=grading_environment(), **pipes)

    def ask(request):
        parent.stdin.write(json.dumps(request) + "\n")
        parent.stdin.flush()
        return json.loads(parent.stdout.readline())

    try:
        assert json.loads(parent.stdout.readline()) == {"ready": True}
        yield ask
    finally:
        parent.stdin.close()
        assert parent.wait(timeout=30) == 0


def _kernel_request(folder, box):
    """A request for a kernel boxed by the file `box` (a stand-in, which ends the kernel itself)."""
    return {"argv": [], "cwd": str(folder), "env": {}, "box": str(box), "kernel_dir": str(folder), "tmp_bytes": 2**20}


def _how_it_ended(ask, request):
    """Fork the kernel `request` asks for and wait until the parent tells how it ended (its wait status)."""
    pid = ask(request)["pid"]
    deadline = time.monotonic() + 30
    while (status := ask({"ended": pid})["status"]) is None:
        assert time.monotonic() < deadline, "the kernel never ended"
        time.sleep(0.05)
    assert ask({"ended": pid}) == {"status": None}  # told once
    return status


def test_the_parent_forks_on_request_tells_once_how_a_kernel_ended_and_clears_nothing_outside_a_box(tmp_path):
    from gradekit.sandbox.kernel_zygote import BOX_FAILED

    box = tmp_path / "box.py"
    box.write_text(FAILING_BOX)
    with _warm_parent() as ask:
        status = _how_it_ended(ask, _kernel_request(tmp_path, box))
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == BOX_FAILED
        # not PID 1 of a box: it would see the whole machine; and none of its kernels runs now
        assert ask({"clear": True, "echo": "mine"}) == {"cleared": 0, "live": 0, "echo": "mine"}


# A box file whose kernel interrupts its parent, then ends: as a kernel inside the box could signal PID 1.
INTERRUPTING_BOX = """
import os, signal

def enter(kernel_dir, *args):
    os.kill(os.getppid(), signal.SIGINT)
    os._exit(0)
"""


def test_a_kernel_that_interrupts_its_parent_leaves_it_serving(tmp_path):
    """The parent handles no SIGINT: inside its box, PID 1 then takes none from a kernel, so none can end it."""
    box = tmp_path / "box.py"
    box.write_text(INTERRUPTING_BOX)
    with _warm_parent() as ask:
        status = _how_it_ended(ask, _kernel_request(tmp_path, box))
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert "pid" in ask(_kernel_request(tmp_path, box))  # still forking: the interrupt ended nothing


# A box file that notes each run of itself, and whose `enter` changes its own state, writes what it saw, and ends the kernel.
COUNTING_BOX = """
import os
with open(os.path.join(os.path.dirname(__file__), "runs"), "a") as runs:
    runs.write("run\\n")
SEEN = []

def enter(kernel_dir, *args):
    SEEN.append(kernel_dir)
    with open(os.path.join(kernel_dir, "seen"), "w") as seen:
        seen.write(str(len(SEEN)))
    os._exit(0)
"""


def test_the_parent_runs_a_kernels_files_once_and_what_one_kernel_changes_in_them_is_its_own(tmp_path):
    box = tmp_path / "box.py"
    box.write_text(COUNTING_BOX)

    def kernel(ask, name):
        folder = tmp_path / name
        folder.mkdir()
        request = {"argv": [], "cwd": str(tmp_path), "env": {}, "box": str(box), "kernel_dir": str(folder)}
        pid = ask(dict(request, tmp_bytes=2**20))["pid"]
        deadline = time.monotonic() + 30
        while not (folder / "seen").exists() or not (folder / "seen").read_text():
            assert time.monotonic() < deadline, f"kernel {pid} never ran its box"
            time.sleep(0.02)
        return (folder / "seen").read_text()

    with _warm_parent() as ask:
        assert [kernel(ask, "first"), kernel(ask, "second")] == ["1", "1"]  # each starts from the parent's state
        assert (tmp_path / "runs").read_text() == "run\n"  # run once, in the parent
        box.write_text(COUNTING_BOX + "\n# changed\n")
        assert kernel(ask, "third") == "1"
        assert (tmp_path / "runs").read_text() == "run\nrun\n"  # a changed file is run again


# A box file that writes which of the modules STACK (defined above it) its kernel found imported, and ends the kernel.
STACK_BOX = """
import json, os, sys

def enter(kernel_dir, *args):
    with open(os.path.join(kernel_dir, "seen"), "w") as seen:
        seen.write(json.dumps([name for name in STACK if name in sys.modules]))
    os._exit(0)
"""


def _stack_box(folder):
    """STACK_BOX, told the compile stack's modules, written in `folder`."""
    box = folder / "box.py"
    box.write_text(f"STACK = {COMPILE_STACK!r}\n{STACK_BOX}")
    return box


def _stack_seen(ask, box, folder, **request):
    """Fork a kernel in the new `folder`, boxed by `box` (_stack_box): the compile stack's modules it found imported."""
    folder.mkdir()
    _how_it_ended(ask, dict(_kernel_request(folder, box), **request))
    return json.loads((folder / "seen").read_text())


def test_the_parent_imports_the_compile_stack_for_the_first_kernel_that_compiles_and_keeps_it(tmp_path):
    box = _stack_box(tmp_path)
    with _warm_parent() as ask:
        assert _stack_seen(ask, box, tmp_path / "first") == []  # a run that never compiles goes without
        assert _stack_seen(ask, box, tmp_path / "compiling", compiles=True) == list(COMPILE_STACK)
        assert _stack_seen(ask, box, tmp_path / "after") == list(COMPILE_STACK)  # kept for every kernel after it


def test_a_module_left_in_the_parents_folder_is_never_run_by_it(tmp_path):
    """The parent imports after kernels have run: never from its working folder (in production, its box's root)."""
    box = _stack_box(tmp_path)
    folder = tmp_path / "parent"
    folder.mkdir()
    started_as_the_grader_starts_it = (sys.executable, "-c", ZYGOTE.read_text())
    with _warm_parent(started_as_the_grader_starts_it, cwd=folder) as ask:
        _stack_seen(ask, box, tmp_path / "first")
        # What a kernel could leave where the parent works: a module named as one the parent imports later.
        (folder / "networkx.py").write_text("open(__file__ + '.ran', 'w').close()\n")
        seen = _stack_seen(ask, box, tmp_path / "compiling", compiles=True)
    assert seen == list(COMPILE_STACK)
    assert not (folder / "networkx.py.ran").exists()


# A process that imports the warm parent's file for its names (as the tests do).
IMPORTER_PROBE = """
import gc, json, sys
sys.path.insert(0, ".")
before = list(sys.path)
import gradekit.sandbox.kernel_zygote
print(json.dumps({"collecting": gc.isenabled(), "same_path": sys.path == before}))
"""


def test_importing_the_parents_file_for_its_names_changes_nothing_in_the_importer():
    """Its collector and path settings are the warm parent's own, made only where it runs as a program."""
    said = subprocess.run(
        [sys.executable, "-c", IMPORTER_PROBE], cwd=REPO_ROOT, capture_output=True, text=True, env=grading_environment()
    )
    assert said.returncode == 0, said.stderr
    assert json.loads(said.stdout) == {"collecting": True, "same_path": True}


MODULE_LISTING = """
import json, sys, torch, ipykernel.ipkernel
kernel = get_ipython().kernel
print(json.dumps({
    "listed": len(kernel._kernel_modules), "torch_listed": torch.__file__ in kernel._kernel_modules,
    "imports_see_every_module": "torch" in sys.modules and len(sys.modules) > 1000,
    "table_is_ipkernels_alone": ipykernel.ipkernel.sys.modules is not sys.modules,
}))
"""


def test_a_forked_kernel_lists_the_parents_module_files_from_a_table_and_imports_see_every_module(tmp_path):
    seen = _probe(WarmKernelManager, tmp_path, MODULE_LISTING)
    assert seen == {
        "listed": seen["listed"],
        "torch_listed": True,
        "imports_see_every_module": True,
        "table_is_ipkernels_alone": True,
    }
    assert seen["listed"] > 1000  # the parent's imports, torch's among them


def test_ipkernel_reads_sys_modules_only_to_list_the_module_files():
    """The parent hands ipkernel a table for `sys.modules` (kernel_zygote.SysWithListedModules): only its listing may read it."""
    import ipykernel.ipkernel

    source = Path(ipykernel.ipkernel.__file__).read_text()
    assert source.count("sys.modules") == 1
    assert "self._kernel_modules = [\n            m.__file__ for m in sys.modules.copy().values()" in source


def test_compacting_the_module_names_keeps_every_module_in_its_order_under_an_equal_name():
    """The warm parent re-keys sys.modules with fresh name copies (kernel_zygote.compact_module_names)."""
    import runpy

    zygote = runpy.run_path(str(Path(warm_kernels.__file__).parent.parent / "sandbox" / "kernel_zygote.py"))
    before = list(sys.modules.items())
    zygote["compact_module_names"]()
    after = list(sys.modules.items())
    assert [(name, id(module)) for name, module in after] == [(name, id(module)) for name, module in before]
    assert all(new is not old for (new, _), (old, _) in zip(after, before, strict=True))
    import json as again  # imports find what is already loaded

    assert again is json
