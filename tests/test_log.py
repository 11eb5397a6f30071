"""The kit logs instead of printing: quiet by default, -v for what it does, all on stderr (the `-v` option: test_cli.py)."""

import ast
import logging
import warnings
from pathlib import Path

import pytest

import gradekit
from gradekit.core import log

pytestmark = pytest.mark.unit

PACKAGE = Path(gradekit.__file__).parent
# Folders allowed to print: the commands (their results are their output) and the
# sandbox (it runs in the student's kernel and speaks to the grader over its pipes).
PRINTING_FOLDERS = ("commands", "sandbox")
# Printing that is a feature, not a diagnostic: the hidden tests' own print, captured as the cell's output.
PRINTING_FUNCTIONS = {("grading/sealed_checks.py", "grader_print")}


def test_only_warnings_show_by_default(kit_logger, capsys):
    log.configure(0)
    logging.getLogger("gradekit.grading.cohort").info("grading 3 submissions")
    logging.getLogger("gradekit.lms.export_step").warning("not in the LMS roster: bob")
    shown = capsys.readouterr()
    assert "grading 3 submissions" not in shown.err
    assert "WARNING gradekit.lms.export_step: not in the LMS roster: bob" in shown.err
    assert shown.out == ""


def test_one_v_shows_info_and_two_show_debug(kit_logger, capsys):
    log.configure(1)
    logging.getLogger("gradekit.grading.cohort").info("grading 3 submissions")
    logging.getLogger("gradekit.grading.cohort").debug("template written")
    assert "INFO gradekit.grading.cohort: grading 3 submissions" in capsys.readouterr().err
    log.configure(2)
    logging.getLogger("gradekit.grading.cohort").debug("template written")
    shown = capsys.readouterr().err
    assert shown.count("template written") == 1, "configuring again must not add a second handler"


def _prints(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, enclosing function) of each call of print in a module."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == "print":
                found.append((child.lineno, function))
            visit(child, inner)

    visit(tree, "")
    return found


def test_no_print_outside_the_commands_and_the_sandbox():
    stray = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.split("/")[0] in PRINTING_FOLDERS:
            continue
        for line, function in _prints(ast.parse(path.read_text())):
            if (relative, function) not in PRINTING_FUNCTIONS:
                stray.append(f"{relative}:{line}")
    assert stray == [], f"log with logging.getLogger(__name__) instead of print: {stray}"


def test_the_scan_finds_a_print():
    tree = ast.parse("def report():\n    print('done')\nprint('top')\n")
    assert _prints(tree) == [(2, "report"), (3, "")]


def test_the_gradebook_notes_of_nbgrader_are_hushed_and_nothing_else(kit_logger):
    from sqlalchemy.exc import SAWarning

    log.configure(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log.hush_known_noise()  # catch_warnings reset the filters: put the kit's back inside the block
        note = "Object of type <SubmittedNotebook> not in session, add operation along 'Notebook.submissions' will not proceed"
        warnings.warn(note, SAWarning)
        warnings.warn("Object of type <SubmittedNotebook> not in session", UserWarning)  # another class still shows
        warnings.warn("a different gradebook note", SAWarning)
    assert [str(w.message) for w in caught] == [
        "Object of type <SubmittedNotebook> not in session",
        "a different gradebook note",
    ]
