"""The lock leaves out what would slow every process that reads a notebook, and `make lock` keeps it out."""

import importlib.util
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[1]
# jsonschema imports rfc3987-syntax when it is installed, which builds a lark grammar at import (about 0.9 s).
LEFT_OUT = ("rfc3987-syntax", "lark")


def test_the_lock_pins_neither_the_grammar_nor_its_parser():
    pinned = {line.split("==")[0].lower() for line in (REPO_ROOT / "requirements.lock").read_text().splitlines()}
    assert not pinned & set(LEFT_OUT)


def test_make_lock_leaves_them_out_of_the_next_lock():
    makefile = (REPO_ROOT / "Makefile").read_text()
    (excluded,) = re.findall(r"^UNLOCKED = (.*)$", makefile, re.MULTILINE)
    assert excluded.split() == [word for name in LEFT_OUT for word in ("--exclude", name)]
    (freeze,) = [line for line in makefile.splitlines() if "pip freeze" in line]
    assert "$(UNLOCKED)" in freeze


def test_this_environment_has_neither_so_reading_a_notebook_builds_no_grammar():
    assert [name for name in ("lark", "rfc3987_syntax") if importlib.util.find_spec(name)] == []
