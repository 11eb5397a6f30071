"""A submission after the due date is taken with a word: deploy/jupyter/environment/nbgrader_config.py.

The unit tests read the file's own functions; the last ones run the real `nbgrader submit` and list
of this environment against a scratch exchange, the file's settings read after the installed ones.
"""

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeFactory
from nbgrader.validator import Validator
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from gradekit.core.nbgrader_cli import grading_environment

ENVIRONMENT_CONFIG = Path(__file__).resolve().parents[1] / "deploy" / "jupyter" / "environment" / "nbgrader_config.py"
DUE = datetime.datetime(2026, 12, 18, 23, 0, tzinfo=datetime.timezone.utc)
COURSE = "autograd-course"
ASSIGNMENT = "autograd"


@pytest.fixture(autouse=True)
def validator_kept(monkeypatch):
    """Loading the file rewords nbgrader's validator in this process; it is put back afterwards."""
    for method in ("_print_num_failed", "_preprocess", "validate", "_extract_error", "_print_error"):
        monkeypatch.setattr(Validator, method, getattr(Validator, method))


def _environment_file() -> dict:
    loaded: dict = {"get_config": Config}
    exec(compile(ENVIRONMENT_CONFIG.read_text(), str(ENVIRONMENT_CONFIG), "exec"), loaded)
    return loaded


@pytest.mark.unit
def test_a_submission_in_time_gets_no_word():
    late_words = _environment_file()["late_words"]
    assert late_words(DUE, DUE) == ""
    assert late_words(DUE, DUE - datetime.timedelta(days=3)) == ""


@pytest.mark.unit
@pytest.mark.parametrize(
    ("after", "amount"),
    [
        (datetime.timedelta(seconds=1), "1 min"),
        (datetime.timedelta(hours=3, minutes=59), "3 h"),
        (datetime.timedelta(days=2, hours=5), "2 days"),
    ],
)
def test_a_late_submission_is_told_it_was_taken_and_by_how_much(after, amount):
    said = _environment_file()["late_words"](DUE, DUE + after)
    assert said == (
        f"Submitted {amount} after the due date (Friday 18 December 2026, 23:00 UTC): it is taken and marked late; "
        "the course's late policy applies (from the end of your extension, if you have one)."
    )


def _release(folder: Path, *dues: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for number, due in enumerate(dues):
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 010")])
        if due is not None:
            notebook.metadata["kit_due"] = due
        nbformat.write(notebook, folder / f"0{number}0_notebook.ipynb")
    return folder


@pytest.mark.unit
def test_the_due_date_is_the_one_every_notebook_of_the_release_carries(tmp_path):
    released_due = _environment_file()["released_due"]
    assert released_due(_release(tmp_path / "same", DUE.isoformat(), DUE.isoformat())) == DUE
    assert released_due(_release(tmp_path / "none", None, None)) is None
    assert released_due(_release(tmp_path / "one-undated", DUE.isoformat(), None)) is None
    assert released_due(_release(tmp_path / "zoneless", "2026-12-18T23:00:00")) is None
    assert released_due(tmp_path / "missing") is None


# --- the real exchange ----------------------------------------------------------------------


def _exchange(tmp_path: Path, due: datetime.datetime, damaged: bool = False) -> tuple[Path, Path]:
    """A scratch exchange with the course's release in outbound, and the student's fetched copy."""
    root = tmp_path / "exchange"
    (root / COURSE / "inbound").mkdir(parents=True)
    os.chmod(root, 0o777)
    release = _release(root / COURSE / "outbound" / ASSIGNMENT, due.isoformat())
    if damaged:
        (release / "020_damaged.ipynb").write_text("{ not a notebook")
    student = tmp_path / "student"
    (student / ASSIGNMENT).mkdir(parents=True)
    for notebook in release.glob("*.ipynb"):
        (student / ASSIGNMENT / notebook.name).write_bytes(notebook.read_bytes())
    return root, student


def _exchange_options(root: Path, tmp_path: Path) -> list[str]:
    return [f"--course={COURSE}", f"--Exchange.root={root}", f"--Exchange.cache={tmp_path / 'cache'}"]


def _submit(root: Path, student: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = grading_environment()
    env["JUPYTER_CONFIG_PATH"] = str(ENVIRONMENT_CONFIG.parent)  # this file read after the installed one
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", "submit", ASSIGNMENT, *_exchange_options(root, tmp_path)],
        cwd=student,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _inbound(root: Path) -> list[Path]:
    return sorted((root / COURSE / "inbound").iterdir())


@pytest.mark.nbgrader
def test_nbgrader_submit_takes_a_late_submission_and_says_how_late(tmp_path):
    due = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=3, minutes=10)
    root, student = _exchange(tmp_path, due)
    run = _submit(root, student, tmp_path)
    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    assert "Submitted 3 h after the due date" in said and "it is taken and marked late" in said, said
    (taken,) = _inbound(root)
    assert (taken / "000_notebook.ipynb").is_file()


@pytest.mark.nbgrader
def test_nbgrader_submit_in_time_says_nothing_of_lateness(tmp_path):
    root, student = _exchange(tmp_path, datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2))
    run = _submit(root, student, tmp_path)
    said = run.stdout + run.stderr
    assert run.returncode == 0 and len(_inbound(root)) == 1, said
    assert "after the due date" not in said, said


@pytest.mark.nbgrader
def test_a_release_that_cannot_be_read_still_takes_the_submission(tmp_path):
    root, student = _exchange(tmp_path, DUE, damaged=True)
    run = _submit(root, student, tmp_path)
    said = run.stdout + run.stderr
    assert run.returncode == 0 and len(_inbound(root)) == 1, said
    assert "whether it was late could not be read" in said, said


@pytest.mark.nbgrader
def test_the_students_list_of_submissions_carries_the_late_words(tmp_path):
    due = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1, hours=2)
    root, student = _exchange(tmp_path, due)
    assert _submit(root, student, tmp_path).returncode == 0
    config = PyFileConfigLoader(ENVIRONMENT_CONFIG.name, path=str(ENVIRONMENT_CONFIG.parent)).load_config()
    config.Exchange.root, config.Exchange.cache = str(root), str(tmp_path / "cache")
    config.CourseDirectory.course_id = COURSE
    config.ExchangeList.cached = True
    lister = ExchangeFactory(config=config).List(
        coursedir=CourseDirectory(config=config), authenticator=Authenticator(config=config), config=config
    )
    (assignment,) = lister.start()
    (submission,) = assignment["submissions"]
    assert submission["kit_late"].startswith("Submitted 1 day after the due date"), json.dumps(submission)
