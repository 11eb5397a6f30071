"""The notebook scripts and the tooling are linted like any other code (ruff.toml: pyflakes rules)."""
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).with_name("ruff")


def test_scripts_and_tooling_have_no_pyflakes_findings():
    result = subprocess.run(
        [str(RUFF), "check", "--no-cache", "--select", "F,E9", "solutions/notebooks/", "gradekit/"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
