"""The student's journey in real JupyterLab: fetch, read, answer, check, Validate, Submit.

The course lead releases 010_history into a scratch exchange; student `ada`
(her own home folder and nbgrader configuration) runs `jupyter lab` there and
does everything through the browser.
"""

import datetime
import time

import nbformat
import pytest

from gradekit.authoring.cells import function_source
from gradekit.authoring.due_header import add_due_headers
from gradekit.authoring.solutions import load_controls, reference_function
from gradekit.core.cell_ids import cells_by_grade_id
from gradekit.core.due_words import when
from gradekit.core.manifest import load_manifest
from journeys import exchange, lab_ui
from journeys.student_account import create_student_account, student_environment

pytestmark = pytest.mark.browser

NOTEBOOK = "010_history"
WRONG_ANSWER = f"{NOTEBOOK.split('_')[0]}-square_sum_grad__no_reduction"


def test_student_fetches_answers_validates_and_submits(history_course, tmp_path, page, screenshot, lab_for):
    manifest = load_manifest().only([NOTEBOOK])
    scratch = history_course
    exchange_root = tmp_path / "exchange"
    due = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2, hours=6)
    due_said = f"This notebook is due {when(due)}, in 2 days."
    ada = _fetched_by_ada(scratch, exchange_root, due, tmp_path, page, lab_for)
    screenshot(page, "assignments-fetched")
    fetched = ada.assignment_dir(scratch.assignment_id) / f"{NOTEBOOK}.ipynb"
    assert fetched.is_file()

    lab_ui.open_fetched_notebook(page, scratch.assignment_id, NOTEBOOK)
    index = {name: position for position, name in enumerate(_grade_ids(fetched))}
    title = _title(fetched)
    heading = lab_ui.rendered_markdown(page, index["intro"]).locator("h1")
    assert heading.inner_text().strip() == title
    screenshot(page, "lesson-rendered")

    lab_ui.run_cell(page, index["setup"])
    lab_ui.run_cell(page, index["answer_float64_leaf"])
    stub = lab_ui.run_cell(page, index["test_float64_leaf"])
    assert "float64_leaf is not written yet" in stub and "NotImplementedError" in stub, stub
    screenshot(page, "stub-diagnosis")

    answers = {name: _reference(manifest, name) for name in ("float64_leaf", "square_sum_grad", "gradient_at")}
    passed = _answer_and_check(page, index, "float64_leaf", answers["float64_leaf"])
    assert (
        "Checked on the page's examples [1.0, 2.0, 3.0] and [1.1]: shape, dtype float64, requires_grad, leaf" in passed
    ), passed

    control = next(c for c in load_controls(manifest) if c.name == WRONG_ANSWER)
    diagnosis = _answer_and_check(page, index, control.function, control.source)
    assert f"[misconception: {control.misconception}]" in diagnosis, diagnosis
    screenshot(page, "misconception-diagnosis")

    lab_ui.save_notebook(page)
    failed = lab_ui.validate(page)
    assert "The following cell failed" in failed and f"[misconception: {control.misconception}]" in failed, failed
    # The first thing under the heading is the failed check's name and its diagnosis, whole, not its code.
    first = page.locator(".jp-Dialog .validation-failed pre").first.inner_text()
    assert first.startswith("test_") and f"[misconception: {control.misconception}]" in first, first
    assert "def " not in first and "..." not in first, first
    # The due line sits beside the Ok button, in sight however long the list of failed checks is.
    assert page.locator(".jp-Dialog-footer .kit-validate-due").inner_text() == due_said, failed
    screenshot(page, "validate-fails")
    lab_ui.close_dialog(page)

    for name in ("square_sum_grad", "gradient_at"):
        passed = _answer_and_check(page, index, name, answers[name])
        assert "Checked " in passed and "The grader also tests" in passed, passed
    lab_ui.save_notebook(page)
    _wait_until_saved(page, fetched, answers)
    succeeded = lab_ui.validate(page)
    # The course's lab extension rewords nbgrader's fixed line; away from a hub there is no Pre-check.
    assert "visible checks passed" in succeeded and "once you submit" in succeeded, succeeded
    assert "passes all the tests" not in succeeded, succeeded
    assert page.locator(".jp-Dialog-footer .kit-validate-due").inner_text() == due_said, succeeded
    assert lab_ui.notebook(page).locator(".kit-precheck-button").count() == 0
    screenshot(page, "validate-passes")
    lab_ui.close_dialog(page)

    lab_ui.switch_to_tab(page, "Assignments")
    row = lab_ui.submit(page, scratch.assignment_id)
    screenshot(page, "submitted")
    assert scratch.assignment_id in row
    inbound = list((exchange_root / scratch.course_id / "inbound").glob(f"ada+{scratch.assignment_id}+*"))
    assert len(inbound) == 1, inbound
    submitted = nbformat.read(inbound[0] / f"{NOTEBOOK}.ipynb", as_version=4)
    assert _answer_text(submitted, answers) == answers
    assert page.locator(".jp-Dialog").count() == 0  # in time: Submit says nothing of lateness
    assert page.page_errors == []


def _fetched_by_ada(scratch, exchange_root, due, tmp_path, page, lab_for):
    """The course released with `due`; ada, a student account, fetches it in her JupyterLab's Assignments tab."""
    add_due_headers(scratch.release_dir, due)
    exchange.release_assignment(scratch, exchange_root)
    ada = create_student_account(tmp_path / "home", "ada", scratch.course_id, exchange_root)
    server = lab_for(ada.home, student_environment(ada))
    page.goto(server.url("lab"))
    lab_ui.wait_for_lab(page)
    lab_ui.open_assignments(page)
    lab_ui.fetch(page, scratch.assignment_id)
    return ada


def test_a_student_who_submits_after_the_due_date_is_told_it_was_taken_late(
    history_course, tmp_path, page, screenshot, lab_for
):
    scratch = history_course
    exchange_root = tmp_path / "exchange"
    due = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=3, minutes=20)
    _fetched_by_ada(scratch, exchange_root, due, tmp_path, page, lab_for)
    lab_ui.submit(page, scratch.assignment_id)
    told = lab_ui.dialog_text(page, "Submitted after the due date")
    screenshot(page, "submitted-late")
    assert told == (
        f"Submitted 3 h after the due date ({when(due)}): it is taken and marked late; "
        "the course's late policy applies (from the end of your extension, if you have one)."
    ), told
    lab_ui.close_dialog(page)
    inbound = list((exchange_root / scratch.course_id / "inbound").glob(f"ada+{scratch.assignment_id}+*"))
    assert len(inbound) == 1, inbound
    assert page.page_errors == []


def _grade_ids(path):
    notebook = nbformat.read(path, as_version=4)
    return [cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in notebook.cells]


def _title(path) -> str:
    """The lesson title: the text of the notebook's first level-one heading (the due date heads the page above it)."""
    cells = nbformat.read(path, as_version=4).cells
    return next(line[2:].strip() for cell in cells for line in cell.source.splitlines() if line.startswith("# "))


def _reference(manifest, name: str) -> str:
    return function_source(reference_function(manifest, NOTEBOOK, name))


def _answer_and_check(page, index: dict, function: str, source: str) -> str:
    """Type `source` into the function's answer cell, run it, run the check below; return the check's output."""
    lab_ui.type_into_cell(page, index[f"answer_{function}"], source)
    lab_ui.run_cell(page, index[f"answer_{function}"])
    return lab_ui.run_cell(page, index[f"test_{function}"])


def _answer_text(notebook, answers: dict) -> dict:
    cells = cells_by_grade_id(notebook)
    return {name: cells[f"answer_{name}"].source.strip() for name in answers}


def _wait_until_saved(page, path, answers: dict, timeout: float = 30) -> None:
    """Poll the notebook file until JupyterLab has written the typed answers to disk."""
    deadline = time.monotonic() + timeout
    while _answer_text(nbformat.read(path, as_version=4), answers) != answers:
        assert time.monotonic() < deadline, "the typed answers never reached the saved notebook"
        page.wait_for_timeout(300)  # keeps Playwright's event loop turning, unlike time.sleep
