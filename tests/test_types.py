"""The type checker finds nothing in the package, with the settings of .mypy.ini, and those settings stay strict."""

import configparser
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.nbgrader

ROOT = Path(__file__).resolve().parent.parent
MYPY = Path(sys.executable).with_name("mypy")
CONFIG = ROOT / ".mypy.ini"


def _sections() -> dict[str, dict[str, str]]:
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    found: dict[str, dict[str, str]] = {}
    for section in parser.sections():
        for module in section.removeprefix("mypy-").split(","):
            found.setdefault(module.strip(), {}).update(parser[section])
    return found


def test_the_package_type_checks():
    result = subprocess.run([str(MYPY)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_body_is_read_and_the_kernel_side_the_core_and_the_engine_are_typed():
    sections = _sections()
    assert sections["mypy"]["check_untyped_defs"] == "True"
    assert sections["mypy"]["warn_unused_ignores"] == "True"
    for package in ("gradekit.sandbox.*", "gradekit.core.*", "gradekit.grading.*"):
        assert sections[package]["disallow_untyped_defs"] == "True", package


def test_no_module_is_let_off():
    sections = _sections()
    untyped = {module for module, options in sections.items() if options.get("disallow_untyped_defs") == "False"}
    unread = {module for module, options in sections.items() if options.get("check_untyped_defs") == "False"}
    assert not untyped and not unread


def test_an_untyped_function_in_the_sandbox_and_a_bad_body_anywhere_are_found(tmp_path):
    """The settings at work: the same config on two small modules placed where the package's would be."""
    for package in ("gradekit", "gradekit/sandbox", "gradekit/report"):
        (tmp_path / package).mkdir(exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "gradekit/sandbox/untyped.py").write_text("def passed_through(value):\n    return value\n")
    (tmp_path / "gradekit/report/bad_body.py").write_text(
        textwrap.dedent("""
            def total():
                return 1 + "1"
        """)
    )
    result = subprocess.run(
        [str(MYPY), "--config-file", str(CONFIG), "--no-incremental", "gradekit"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert "gradekit/sandbox/untyped.py:1: error: Function is missing a type annotation" in result.stdout
    assert "gradekit/report/bad_body.py:3: error: Unsupported operand types" in result.stdout
