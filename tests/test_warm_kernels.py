"""The warm kernels' parent: started without the grader's secrets, told which kernels compile (how its kernels look: test_kernel_zygote.py)."""

import json
import os
import signal

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from gradekit.grading.warm_kernels import WarmExecute, Zygote, calls_compile, discard_zygote, without_secrets, zygote
from gradekit.sandbox.kernel_guard import PROTECTED_VARIABLE
from gradekit.sandbox.kernel_zygote import COMPILE_STACK


@pytest.mark.notebook
def test_the_kernels_parent_never_holds_the_graders_secrets(monkeypatch, tmp_path):
    """Kernels are forked from the zygote and can read its environment block: it must hold no password, no course path."""
    monkeypatch.setenv("KIT_GRADEBOOK_URL", "postgresql://grader:sw0rdfish@127.0.0.1/gradebook")
    monkeypatch.setenv("KIT_EXCHANGE_ROOT", "/srv/exchange")
    monkeypatch.setenv(PROTECTED_VARIABLE, "/srv/course-with-hidden-tests")
    parent = Zygote(without_secrets(os.environ), tmp_path / "kernels")
    try:
        block = open(f"/proc/{parent.host_pid}/environ", "rb").read()
    finally:
        parent.close()
    assert b"sw0rdfish" not in block and b"KIT_EXCHANGE_ROOT" not in block
    assert b"hidden-tests" not in block
    assert b"PATH=" in block


@pytest.mark.notebook
def test_a_forked_process_that_ends_its_zygote_leaves_its_parents_running_with_its_folder():
    """A forked grading process ends with discard_zygote: the parent's own zygote must outlive it."""
    parent = zygote()
    child = os.fork()
    if child == 0:
        try:
            discard_zygote()
            parent.close()  # as the exit handler it inherited would, were it to exit normally
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    try:
        assert zygote() is parent and parent.process.poll() is None and parent.kernels_root.is_dir()
    finally:
        discard_zygote()


@pytest.mark.notebook
def test_a_zygote_that_died_is_replaced_and_leaves_neither_its_pipes_nor_its_folder():
    discard_zygote()
    dead = zygote()
    os.kill(dead.process.pid, signal.SIGKILL)
    dead.process.wait()
    try:
        fresh = zygote()
        assert fresh is not dead and fresh.running()
        assert dead.process.stdin.closed and dead.process.stdout.closed and dead.errors.closed
        assert not dead.kernels_root.exists()
    finally:
        discard_zygote()


@pytest.mark.unit
def test_a_notebook_calls_compile_when_a_code_cell_names_torch_compile():
    assert calls_compile(new_notebook(cells=[new_code_cell("fast = torch.compile(slow, backend='aot_eager')")]))
    assert not calls_compile(new_notebook(cells=[new_markdown_cell("`torch.compile` is for later")]))
    assert not calls_compile(new_notebook(cells=[new_code_cell("pattern = re.compile('x')")]))
    for odd in (None, 7, ["torch.compile(f)"]):  # what a hand-edited file may hold: never an error here
        notebook = new_notebook(cells=[new_code_cell()])
        notebook.cells[0].source = odd
        assert not calls_compile(notebook)


@pytest.mark.notebook
def test_a_notebook_that_compiles_finds_the_compile_stack_imported_in_its_kernels_first_cell(tmp_path):
    probe = f"import json, sys\nprint(json.dumps([n for n in {COMPILE_STACK!r} if n in sys.modules]))"
    named = "import torch\ncompiled = torch.compile  # named, never called"
    notebook = new_notebook(cells=[new_code_cell(probe), new_code_cell(named)])
    discard_zygote()  # a fresh warm parent, which no earlier kernel of this process asked for the stack
    try:
        executed, _ = WarmExecute(timeout=60).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    finally:
        discard_zygote()
    assert json.loads(executed.cells[0].outputs[0]["text"]) == list(COMPILE_STACK)
    assert "outputs" in executed.cells[1] and not executed.cells[1].outputs


@pytest.mark.unit
def test_a_tasks_clock_reads_the_lent_parent_and_the_graders_processes_from_one_look(monkeypatch):
    from types import SimpleNamespace

    from gradekit.grading import warm_kernels

    monkeypatch.setattr(warm_kernels, "_zygote", None)
    assert warm_kernels.clocked_parent() == ((), frozenset())
    own = SimpleNamespace(process=SimpleNamespace(pid=101), host_pid=102, owner=os.getpid())
    monkeypatch.setattr(warm_kernels, "_zygote", own)
    assert warm_kernels.clocked_parent() == ((), frozenset({101, 102}))  # its tree is this process's already
    lent = SimpleNamespace(process=SimpleNamespace(pid=201), host_pid=202, owner=os.getpid() + 1)
    monkeypatch.setattr(warm_kernels, "_zygote", lent)
    assert warm_kernels.clocked_parent() == ((201,), frozenset({201, 202}))
