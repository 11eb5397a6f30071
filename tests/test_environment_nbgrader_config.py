"""deploy/jupyter/environment/nbgrader_config.py: Validate never says "passes all the tests" when only visible checks ran.

The unit tests load the file as nbgrader does; the last one runs the real
`nbgrader validate` of this environment (where `make` installs the file) on a
release notebook, answered right and then wrong.
"""

import io
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.validator import Validator
from traitlets.config.loader import PyFileConfigLoader

from gradekit.core.course import REPO_ROOT
from gradekit.proof.subjects import answer_sources, fill_answers

ENVIRONMENT_CONFIG = REPO_ROOT / "deploy" / "jupyter" / "environment" / "nbgrader_config.py"
INSTALLED_CONFIG = Path(sys.prefix) / "etc" / "jupyter" / "nbgrader_config.py"
NBGRADERS_CLAIM = "passes all the tests"
NOTEBOOK = "010_history"


@pytest.fixture
def loaded_config(monkeypatch):
    """The file loaded as nbgrader loads it; the original validator method is put back afterwards."""
    monkeypatch.setattr(Validator, "_print_num_failed", Validator._print_num_failed)
    monkeypatch.setattr(Validator, "_preprocess", Validator._preprocess)
    PyFileConfigLoader(ENVIRONMENT_CONFIG.name, path=str(ENVIRONMENT_CONFIG.parent)).load_config()


def _said(num_failed: int) -> str:
    validator = Validator()
    validator.stream = io.StringIO()
    validator._print_num_failed(num_failed)
    return validator.stream.getvalue()


@pytest.mark.unit
def test_no_failed_cell_is_told_what_ran_and_what_did_not(loaded_config):
    said = _said(0)
    assert NBGRADERS_CLAIM not in said
    assert "visible checks" in " ".join(said.split()) and "other inputs" in said, said


@pytest.mark.unit
def test_failed_cells_keep_nbgraders_own_warning(loaded_config):
    assert "VALIDATION FAILED ON 2 CELL(S)" in " ".join(_said(2).split())


@pytest.mark.unit
def test_loading_it_again_replaces_the_line_once(loaded_config):
    # A server reads its configuration afresh for each Validate.
    once = Validator._print_num_failed
    PyFileConfigLoader(ENVIRONMENT_CONFIG.name, path=str(ENVIRONMENT_CONFIG.parent)).load_config()
    assert Validator._print_num_failed is once
    assert _said(0).count("No test cell failed") == 1


@pytest.mark.unit
def test_the_environment_holds_this_very_file():
    assert INSTALLED_CONFIG.is_file() and INSTALLED_CONFIG.read_text() == ENVIRONMENT_CONFIG.read_text(), (
        f"{INSTALLED_CONFIG} is missing or out of date: `make test` (or `make check`) installs it"
    )


def _validate(folder) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", f"{NOTEBOOK}.ipynb"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return run.stdout + run.stderr


@pytest.mark.nbgrader
def test_nbgrader_validate_says_only_the_visible_checks_passed(course, manifest, tmp_path):
    folder = tmp_path / course.assignment_id
    shutil.copytree(course.release_dir, folder)
    answered = fill_answers(folder / f"{NOTEBOOK}.ipynb", answer_sources(manifest, NOTEBOOK, None))
    nbformat.write(answered, folder / f"{NOTEBOOK}.ipynb")

    said = _validate(folder)
    assert NBGRADERS_CLAIM not in said, said
    assert "No test cell failed" in said and "visible checks" in " ".join(said.split()), said


@pytest.mark.unit
def test_validate_says_when_a_notebook_released_with_a_due_date_is_due(loaded_config):
    import datetime

    from gradekit.core.due_words import due_line

    validator = Validator()
    validator.stream = io.StringIO()
    due = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2, hours=1)
    validator._kit_due = due.isoformat()
    validator._print_num_failed(0)
    said = validator.stream.getvalue()
    assert said.endswith(f"This notebook is {due_line(due, datetime.datetime.now(datetime.timezone.utc))}.\n")
    assert ", in 2 days." in said
    validator._kit_due = "2026-12-18T23:00:00"  # no zone: nothing is said rather than a wrong time
    validator.stream = io.StringIO()
    validator._print_num_failed(2)
    assert "This notebook is due" not in validator.stream.getvalue()


@pytest.mark.unit
@pytest.mark.parametrize("seconds", [20, 12 * 60 + 40, 5 * 3600 + 3599, 86400 + 82800, 4 * 86400, -3 * 3600 - 60])
def test_the_environments_due_words_are_the_kits(loaded_config, seconds):
    import datetime

    from gradekit.core.due_words import due_line

    due = datetime.datetime(2026, 12, 18, 23, 0, tzinfo=datetime.timezone.utc)
    now = due - datetime.timedelta(seconds=seconds)
    loaded: dict = {}  # the file's own functions, as a server loads them
    exec(compile(ENVIRONMENT_CONFIG.read_text(), str(ENVIRONMENT_CONFIG), "exec"), loaded)
    assert loaded["due_line"](due, now) == due_line(due, now)
