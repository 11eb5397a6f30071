"""The whole tree is linted and the code is formatted, as ruff.toml says."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.nbgrader

ROOT = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).with_name("ruff")


def test_the_whole_tree_has_no_lint_findings():
    result = subprocess.run(
        [str(RUFF), "check", "--no-cache", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_formatted():
    result = subprocess.run(
        [str(RUFF), "format", "--check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, "run `ruff format .`:\n" + result.stdout + result.stderr
