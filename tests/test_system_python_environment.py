"""The hub's environment, built as the deployment page says, on the interpreter a hub machine has.

Debian 12's own python3 (3.11.2) is one every account can run; the lock must install on it. The
test builds the environment from the kit's Makefile and lock alone, in a folder of its own, with
none of this environment on PATH, exactly as the deployment page's command does.
"""

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.nbgrader

REPO_ROOT = Path(__file__).resolve().parents[1]
DEPLOYMENT_PAGE = REPO_ROOT / "docs" / "pages" / "deployment.md"
SYSTEM_PYTHON = Path("/usr/bin/python3")
# What `make environment` reads: its rules, the lock, and the course's Jupyter pieces.
ENVIRONMENT_INPUTS = (
    "Makefile",
    "requirements.lock",
    "deploy/install_lock.py",
    "deploy/jupyter/environment",
    "deploy/precheck-lab/labextension",
)
HUB_IMPORTS = "import nbgrader, jupyterhub, jupyterlab, notebook, torch, dask.distributed, psycopg, mkdocs, pymdownx"


def _documented_command() -> list[str]:
    (line,) = re.findall(r"^\s*(make environment PYTHON=\S+)\s*$", DEPLOYMENT_PAGE.read_text(), re.MULTILINE)
    return shlex.split(line)


def _version(python: Path) -> str:
    said = subprocess.run(
        [python, "-c", "import sys; print(*sys.version_info[:3], sep='.')"], capture_output=True, text=True, check=True
    )
    return said.stdout.strip()


def _copy_inputs(target: Path) -> None:
    for name in ENVIRONMENT_INPUTS:
        source, copy = REPO_ROOT / name, target / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, copy)
        else:
            shutil.copy2(source, copy)


def _without_this_environment() -> dict[str, str]:
    """The shell a hub's administrator has: the machine's settings (pip's among them), no kit environment."""
    env = {name: value for name, value in os.environ.items() if name not in ("VIRTUAL_ENV", "PYTHONPATH")}
    ours = str(REPO_ROOT)
    env["PATH"] = os.pathsep.join(part for part in env["PATH"].split(os.pathsep) if not part.startswith(ours))
    return env


def test_the_documented_command_builds_the_hubs_environment_on_the_systems_own_python(tmp_path):
    command = _documented_command()
    assert command[-1] == f"PYTHON={SYSTEM_PYTHON}"
    assert SYSTEM_PYTHON.exists(), "a hub machine's interpreter, Debian's python3, is missing: install python3-venv"
    kit = tmp_path / "kit"
    _copy_inputs(kit)
    env = _without_this_environment()
    built = subprocess.run(command, cwd=kit, env=env, capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]

    python = kit / ".venv" / "bin" / "python"
    assert _version(python) == _version(SYSTEM_PYTHON)
    imported = subprocess.run([python, "-c", HUB_IMPORTS], env=env, capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr[-3000:]
    env["PATH"] = os.pathsep.join([str(python.parent), env["PATH"]])
    extensions = subprocess.run(
        [python.parent / "jupyter", "labextension", "list"], env=env, capture_output=True, text=True
    )
    assert re.search(r"kit-precheck .*enabled", extensions.stdout + extensions.stderr), extensions.stderr
    assert (kit / ".venv" / "etc" / "jupyter" / "nbgrader_config.py").is_file()
    # Compiled ahead: a student's account cannot write the environment's cache, so an uncompiled
    # module would be compiled again at every import. The packages' own test suites are left out.
    (packages,) = (kit / ".venv" / "lib").glob("python3.*/site-packages")
    assert list((packages / "torch" / "__pycache__").glob("__init__.*.pyc"))
    assert list((packages / "nbgrader" / "__pycache__").glob("__init__.*.pyc"))
    assert (packages / "tornado" / "test").is_dir() and not (packages / "tornado" / "test" / "__pycache__").exists()
