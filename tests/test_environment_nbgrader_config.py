"""deploy/jupyter/environment/nbgrader_config.py: Validate never says "passes all the tests" when only visible checks ran.

The unit tests load the file as nbgrader does; the last one runs the real
`nbgrader validate` of this environment (where `make` installs the file) on a
release notebook, answered right and then wrong.
"""

import io
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_output
from nbgrader.validator import Validator
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from gradekit.authoring.solutions import load_controls
from gradekit.core.course import REPO_ROOT
from gradekit.core.manifest import load_manifest
from gradekit.proof.subjects import answer_sources, fill_answers

ENVIRONMENT_CONFIG = REPO_ROOT / "deploy" / "jupyter" / "environment" / "nbgrader_config.py"
INSTALLED_CONFIG = Path(sys.prefix) / "etc" / "jupyter" / "nbgrader_config.py"
NBGRADERS_CLAIM = "passes all the tests"
NOTEBOOK = "010_history"


@pytest.fixture
def loaded_config(monkeypatch):
    """The file loaded as nbgrader loads it; the original validator method is put back afterwards."""
    for method in ("_print_num_failed", "_preprocess", "validate", "_extract_error", "_print_error"):
        monkeypatch.setattr(Validator, method, getattr(Validator, method))
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


def _environment_file() -> dict:
    """The file's names, run as traitlets runs it (its methods are already in place: it keeps them)."""
    return runpy.run_path(str(ENVIRONMENT_CONFIG), init_globals={"get_config": Config})


def _failed_check(message: str, lines: int = 12):
    cell = new_code_cell("\n".join(f"check_line_{n}()" for n in range(lines)))
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_accumulate_grads", "points": 2, "solution": False}
    cell.outputs = [new_output("error", ename="AssertionError", evalue=message, traceback=["\x1b[31mlong traceback"])]
    return cell


@pytest.mark.unit
def test_a_failed_checks_diagnosis_is_whole_and_named(loaded_config):
    diagnosis = _environment_file()["diagnosis"]
    message = "W.grad kept the last round's gradient: " + "clear it first " * 10 + "[misconception: grads-kept]"
    assert diagnosis(_failed_check(message)) == f"test_accumulate_grads: {message}"


@pytest.mark.unit
def test_the_command_line_prints_the_diagnosis_first_wrapped_never_cut(loaded_config):
    validator = Validator()
    validator.stream = io.StringIO()
    advice = "W.grad is not the gradient of the mean loss: " + "divide each batch's loss by the count " * 4
    validator._print_error(f"test_accumulate_grads: {advice}", "check_line_0()\n... (11 more lines of the check)")
    said = validator.stream.getvalue()
    lines = said.splitlines()
    assert lines[2] == "A check failed:" and lines[4].strip().startswith("test_accumulate_grads: W.grad is not")
    shown = said.split("A check failed:")[1].split("Its code:")[0]
    assert " ".join(shown.split()) == f"test_accumulate_grads: {advice}".strip()
    assert all(len(line) <= validator.width for line in lines) and "..." not in said.split("Its code:")[0]


@pytest.mark.unit
def test_the_dialog_gets_the_diagnosis_first_and_the_code_shortened(loaded_config, monkeypatch, tmp_path):
    shown_lines = _environment_file()["CODE_LINES_SHOWN"]
    notebook = nbformat.v4.new_notebook(cells=[_failed_check("clear W.grad before the first batch")])
    monkeypatch.setattr(Validator, "_preprocess", lambda self, nb: nb)  # the cell's outputs as a kernel left them
    path = tmp_path / "050_safe_updates.ipynb"
    nbformat.write(notebook, path)
    (failed,) = Validator(ignore_checksums=True).validate(str(path))["failed"]
    assert failed["source"] == "test_accumulate_grads: clear W.grad before the first batch"
    shown = [f"check_line_{n}()" for n in range(shown_lines)]
    assert failed["raw_error"] == "\n".join([*shown, f"... ({12 - shown_lines} more lines of the check)"])
    assert failed["error"].startswith("The check&#x27;s code:\n")


def _validate(folder, notebook: str = NOTEBOOK, this_file: bool = False) -> str:
    env = dict(os.environ)
    if this_file:  # this file read after the installed one: its settings win, as the installed copy's will
        env["JUPYTER_CONFIG_PATH"] = str(ENVIRONMENT_CONFIG.parent)
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", f"{notebook}.ipynb"],
        env=env,
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
    loaded: dict = {
        "get_config": Config
    }  # the file sets its kernels' transport keys on it  # the file's own functions, as a server loads them
    exec(compile(ENVIRONMENT_CONFIG.read_text(), str(ENVIRONMENT_CONFIG), "exec"), loaded)
    assert loaded["due_line"](due, now) == due_line(due, now)


@pytest.mark.nbgrader
def test_validate_leads_with_the_diagnosis_of_a_failing_050_and_no_transport_warning(course, tmp_path):
    manifest = load_manifest()
    control = next(c for c in load_controls(manifest) if c.student_id.endswith("sgd_step__update_in_grad_mode"))
    folder = tmp_path / course.assignment_id
    shutil.copytree(course.release_dir, folder)
    notebook = folder / "050_safe_updates.ipynb"
    nbformat.write(fill_answers(notebook, answer_sources(manifest, "050_safe_updates", control)), notebook)

    said = _validate(folder, "050_safe_updates", this_file=True)
    assert "without encryption" not in said, said
    first = said.split("A check failed:\n\n", 1)[1]
    diagnosis = " ".join(first.split("Its code:")[0].split())
    assert diagnosis.startswith("test_sgd_step: [misconception: inplace-leaf-in-grad-mode]"), said
    assert "do the update inside torch.no_grad()" in diagnosis, said


def _dated_notebook(path: Path, due: str | None) -> Path:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 010")])
    if due is not None:
        notebook.metadata["kit_due"] = due
    nbformat.write(notebook, path)
    return path


def _validated(path: Path, monkeypatch) -> dict:
    """The dialog's reply for `path`, its cells taken as a kernel would leave them (no kernel runs)."""
    remembering = _environment_file()["_remembering_preprocess"]
    monkeypatch.setattr(Validator, "_preprocess", lambda self, nb: remembering(self, nb, nbgraders_own=lambda _, n: n))
    return Validator(ignore_checksums=True).validate(str(path))


@pytest.mark.unit
def test_the_dialog_gets_the_due_line_of_a_dated_notebook_and_none_for_an_undated_one(
    loaded_config, monkeypatch, tmp_path
):
    import datetime

    from gradekit.core.due_words import due_line

    due = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2, hours=1)
    reply = _validated(_dated_notebook(tmp_path / "dated.ipynb", due.isoformat()), monkeypatch)
    assert reply == {"due": due_line(due, datetime.datetime.now(datetime.timezone.utc))}
    assert reply["due"].endswith(", in 2 days")
    assert "due" not in _validated(_dated_notebook(tmp_path / "undated.ipynb", None), monkeypatch)
    assert "due" not in _validated(_dated_notebook(tmp_path / "zoneless.ipynb", "2026-12-18T23:00:00"), monkeypatch)


@pytest.mark.unit
@pytest.mark.parametrize("edge", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_a_due_date_at_the_calendars_edge_costs_the_due_line_never_the_validation(
    loaded_config, monkeypatch, tmp_path, edge
):
    assert "due" not in _validated(_dated_notebook(tmp_path / "edge.ipynb", edge), monkeypatch)
