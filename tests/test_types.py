"""The type checker finds nothing in the package, with the settings of .mypy.ini."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.nbgrader

ROOT = Path(__file__).resolve().parent.parent
MYPY = Path(sys.executable).with_name("mypy")


def test_the_package_type_checks():
    result = subprocess.run([str(MYPY)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
