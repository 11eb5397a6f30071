"""The command line starts light: each command imports what it uses when it runs."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.nbgrader  # it starts a process


def test_the_command_line_starts_without_torch_or_nbgrader():
    """Reading the command line costs no engine (torch and nbgrader are about 2 s of CPU at a start)."""
    probe = (
        "import sys, gradekit.commands.cli as cli; cli.parser(); "
        "print(sorted(m for m in sys.modules if m in ('torch', 'nbgrader') or m.startswith('gradekit.grading')))"
    )
    said = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    assert said.stdout.strip() == "[]"
