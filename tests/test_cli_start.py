"""The command line starts light: each command imports what it uses when it runs."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.nbgrader  # it starts a process


def test_the_command_line_starts_without_torch_or_nbgrader():
    """Reading the command line costs no engine (torch and nbgrader are about 2 s of CPU at a start)."""
    probe = "import sys, gradekit.commands.cli; print(sorted({'torch', 'nbgrader'} & set(sys.modules)))"
    said = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert said.stdout.strip() == "[]"
