"""Forked kernels look, from inside a notebook, like kernels started the usual way."""
import json
import os

import nbformat
import pytest
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

from gradekit.course import REPO_ROOT
from gradekit.nbgrader_cli import grading_environment
from gradekit.grading.warm_kernels import WarmKernelManager

pytestmark = pytest.mark.notebook

PROBE = """
import json, os, sys
try:
    import solutions
    reachable = True
except ImportError:
    reachable = False
print(json.dumps({
    "path0": sys.path[0], "cwd": os.getcwd(), "marker": os.environ.get("PROBE_MARKER"),
    "pid": os.getpid(), "solutions": reachable, "argv0": os.path.basename(sys.argv[0]),
    "repo_on_path": any(os.path.realpath(p) == os.path.realpath(%r) for p in sys.path),
}))
""" % str(REPO_ROOT)


def _probe(manager_class, folder):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)])
    env = dict(grading_environment(), PROBE_MARKER="from-the-grader")
    client = NotebookClient(notebook, kernel_name="python3", kernel_manager_class=manager_class,
                            resources={"metadata": {"path": str(folder)}}, timeout=60)
    with client.setup_kernel(env=env):
        client.execute_cell(notebook.cells[0], 0)
    return json.loads(notebook.cells[0].outputs[0]["text"])


def test_forked_kernel_matches_a_normal_kernel(tmp_path):
    normal = _probe(AsyncKernelManager, tmp_path)
    first = _probe(WarmKernelManager, tmp_path)
    second = _probe(WarmKernelManager, tmp_path)
    for key in ("path0", "cwd", "marker", "solutions", "argv0", "repo_on_path"):
        assert first[key] == normal[key], key
    assert first["cwd"] == str(tmp_path) and first["marker"] == "from-the-grader"
    assert not first["solutions"] and not first["repo_on_path"]
    # Every notebook gets a process of its own.
    assert len({first["pid"], second["pid"], os.getpid()}) == 3


def test_a_memory_bomb_fails_its_cell_and_the_kernel_lives_on(tmp_path):
    bomb = nbformat.v4.new_code_cell("import torch\nhog = torch.empty(40 * 2**30, dtype=torch.uint8)")
    after = nbformat.v4.new_code_cell("print('still here')")
    notebook = nbformat.v4.new_notebook(cells=[bomb, after])
    env = dict(grading_environment(), KIT_KERNEL_MEMORY_BYTES=str(4 * 2**30))
    client = NotebookClient(notebook, kernel_name="python3", kernel_manager_class=WarmKernelManager,
                            resources={"metadata": {"path": str(tmp_path)}}, timeout=60, allow_errors=True)
    with client.setup_kernel(env=env):
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
    (error,) = [o for o in bomb.outputs if o.output_type == "error"]
    assert "memory" in (error.ename + error.evalue).lower()
    assert after.outputs[0]["text"].strip() == "still here"
