"""The TA's journey in JupyterLab's formgrader: see the graded cohort, grade a written answer by hand.

The scratch course holds 010_history and a fixture notebook with one manually
graded markdown answer (built here with gradekit.authoring.cells, so the test does not
wait for a free-response exercise in the lesson notebooks). Two students are
autograded with the real `nbgrader autograde`; the TA then works in the browser
and the test reads the score back from nbgrader's gradebook.
"""
import shutil

import nbformat
import pytest

from journeys import exchange
from gradekit.authoring.cells import cells_by_grade_id, free_response_cell, markdown_cell
from gradekit.grading.gradebook import open_gradebook
from gradekit.manifest import load_manifest
from gradekit.nbgrader_cli import run_nbgrader
from gradekit.proof.subjects import answer_sources, fill_answers
from gradekit.authoring.release import build_release
from journeys import lab_ui

pytestmark = pytest.mark.browser

NOTEBOOK = "010_history"
WRITTEN = "099_free_response"
WRITTEN_CELL = "explain_non_leaf"
WRITTEN_POINTS = 2.0
MANUAL_SCORE = 1.5


def free_response_notebook():
    """A notebook with one read-only question and one manually graded markdown answer."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    notebook.cells = [
        markdown_cell("question_non_leaf", "# In your own words\n\nWhy does `.grad` stay `None` on a tensor computed from a leaf?"),
        free_response_cell(WRITTEN_CELL, WRITTEN_POINTS, "Only leaves keep `.grad`; call `retain_grad()` on a non-leaf to keep it."),
    ]
    return notebook


@pytest.fixture
def graded_course(course, tmp_path):
    """A scratch course: 010_history plus the written-answer fixture; ada (reference) and bob (blank) autograded."""
    scratch = course.at(tmp_path / "course")
    shutil.copytree(
        course.source_dir,
        scratch.source_dir,
        ignore=lambda folder, names: {n for n in names if n.endswith(".ipynb") and n != f"{NOTEBOOK}.ipynb"}
        | {"__pycache__", ".ipynb_checkpoints"},
    )
    nbformat.write(free_response_notebook(), scratch.source_dir / f"{WRITTEN}.ipynb")
    build_release(scratch)
    manifest = load_manifest().only([NOTEBOOK])
    for student in ("ada", "bob"):
        folder = scratch.submitted_dir / student / scratch.assignment_id
        folder.mkdir(parents=True)
        for name in (NOTEBOOK, WRITTEN):
            shutil.copyfile(scratch.release_dir / f"{name}.ipynb", folder / f"{name}.ipynb")
    ada = scratch.submitted_dir / "ada" / scratch.assignment_id
    nbformat.write(fill_answers(ada / f"{NOTEBOOK}.ipynb", answer_sources(manifest, NOTEBOOK, None)), ada / f"{NOTEBOOK}.ipynb")
    written = nbformat.read(ada / f"{WRITTEN}.ipynb", as_version=4)
    cells_by_grade_id(written)[WRITTEN_CELL].source = "backward() stores gradients only in leaves."
    nbformat.write(written, ada / f"{WRITTEN}.ipynb")
    run_nbgrader(scratch, "autograde", scratch.assignment_id, "--force")
    exchange_root = tmp_path / "exchange"
    exchange_root.mkdir()
    exchange.install_course_config(scratch)
    return scratch, exchange_root, manifest.points_of(NOTEBOOK)


def test_ta_sees_the_cohort_and_grades_a_written_answer(graded_course, page, screenshot, lab_for):
    scratch, exchange_root, code_points = graded_course
    total = code_points + WRITTEN_POINTS
    server = lab_for(scratch.root, exchange.instructor_environment(scratch, exchange_root))
    page.goto(server.url("lab"))
    lab_ui.wait_for_lab(page)

    formgrader = lab_ui.open_formgrader(page)
    assignment_row = formgrader.locator("tr", has=formgrader.get_by_role("link", name=scratch.assignment_id, exact=True))
    assert assignment_row.locator("td").nth(8).inner_text().strip() == "2"  # the # Submissions column
    screenshot(page, "formgrader-assignments")

    assignment_row.locator("td").nth(8).get_by_role("link").click()
    formgrader.locator("#main-table tr", has_text="bob").wait_for()
    rows = {row[1]: row for row in lab_ui.table_rows(formgrader)}
    assert set(rows) == {"ada", "bob"}
    assert rows["ada"][3] == "needs manual grading" and rows["ada"][4] == f"{code_points:g} / {total:g}"
    assert rows["bob"][4] == f"0 / {total:g}"
    screenshot(page, "formgrader-cohort")

    formgrader.get_by_role("link", name="Manual Grading").click()
    formgrader.get_by_role("link", name=scratch.assignment_id, exact=True).click()
    formgrader.get_by_role("link", name=WRITTEN, exact=True).click()
    formgrader.locator("#main-table tr", has_text="Submission #2").wait_for()  # the table has loaded
    waiting = formgrader.locator("#main-table tr", has=formgrader.locator(".needs-manual-grade .glyphicon-ok"))
    assert waiting.count() == 1
    waiting.get_by_role("link").first.click()
    score = formgrader.locator(f"input.score.needs_manual_grade#{WRITTEN_CELL}")
    score.click()
    page.keyboard.type(f"{MANUAL_SCORE:g}")
    with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT") as saved:
        page.keyboard.press("Tab")
    assert saved.value.ok
    formgrader.locator(f"input.score#{WRITTEN_CELL}:not(.needs_manual_grade)").wait_for()
    screenshot(page, "formgrader-manual-grade")

    with open_gradebook(scratch) as gradebook:
        grade = gradebook.find_grade(WRITTEN_CELL, WRITTEN, scratch.assignment_id, "ada")
        assert (grade.manual_score, grade.needs_manual_grade) == (MANUAL_SCORE, False)
        assert gradebook.find_submission(scratch.assignment_id, "ada").score == code_points + MANUAL_SCORE

    formgrader.get_by_role("link", name=scratch.assignment_id, exact=True).click()  # the grading page's breadcrumb
    formgrader.get_by_role("link", name="Manage Assignments").click()
    formgrader.locator("tr", has_text=scratch.assignment_id).locator("td").nth(8).get_by_role("link").click()
    ada = formgrader.locator("#main-table tr", has_text="ada")
    ada.get_by_text(f"{code_points + MANUAL_SCORE:g} / {total:g}").wait_for()
    assert "needs manual grading" not in ada.inner_text()
    screenshot(page, "formgrader-cohort-after-grading")
    assert page.page_errors == []
