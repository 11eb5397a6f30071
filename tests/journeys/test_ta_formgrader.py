"""The TA's journey in JupyterLab's formgrader: see the graded cohort, grade the written answers of 090_decisions.

The scratch course holds the course's own 090_decisions. Two students are
autograded with the real `nbgrader autograde`: ada submits the reference code
and the model written answers, bob the blank stubs. The TA then works in the
browser, offline: the grading page typesets the lesson's math with the MathJax
of the TA's own server, the TA scores both of ada's written answers and comments
on one (the mark schemes above the answers offer no box to type into), and the test
reads them back from nbgrader's gradebook.
"""

import nbformat
import pytest

from gradekit.authoring.release import new_workspace
from gradekit.core.manifest import load_manifest
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.grading.gradebook import open_gradebook
from gradekit.proof.subjects import answer_sources, fill_answers, written_answer_sources
from journeys import exchange, lab_ui
from journeys.accessibility import blocking_violations, frame_of
from journeys.formgrader_ui import open_cohort, open_the_waiting_submission, score_written_answers, type_and_save

pytestmark = pytest.mark.browser

NOTEBOOK = "090_decisions"
# The TA's marks for ada's two written answers; the first also gets a comment.
MANUAL_SCORES = {"answer_hand_graph": 2.5, "answer_compile_blindly": 2.0}
COMMENTED = "answer_hand_graph"
COMMENT = "Graph and products right; x.grad stays None because x never required grad, say why."


@pytest.fixture
def graded_course(course, tmp_path):
    """A scratch course of 090_decisions; ada (reference, model written answers) and bob (blank) autograded."""
    scratch = new_workspace(course, tmp_path / "course", (NOTEBOOK,))
    manifest = load_manifest().only([NOTEBOOK])
    written = written_answer_sources(manifest, NOTEBOOK, scratch.source_dir / f"{NOTEBOOK}.ipynb")
    assert set(written) == set(MANUAL_SCORES)
    release = scratch.release_dir / f"{NOTEBOOK}.ipynb"
    submissions = {
        "ada": fill_answers(release, answer_sources(manifest, NOTEBOOK, None) | written),
        "bob": nbformat.read(release, as_version=4),
    }
    for student, notebook in submissions.items():
        folder = scratch.submitted_dir / student / scratch.assignment_id
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{NOTEBOOK}.ipynb")
    run_nbgrader(scratch, "autograde", scratch.assignment_id, "--force")
    exchange_root = tmp_path / "exchange"
    exchange_root.mkdir()
    exchange.install_course_config(scratch)
    written_points = sum(answer.points for answer in manifest.manual)
    return scratch, exchange_root, manifest.points_of(NOTEBOOK), written_points


def test_ta_grades_the_written_answers_of_the_course_offline(graded_course, page, screenshot, lab_for):
    scratch, exchange_root, code_points, written_points = graded_course
    total = code_points + written_points
    server = lab_for(scratch.root, exchange.instructor_environment(scratch, exchange_root))
    page.goto(server.url("lab"))
    lab_ui.wait_for_lab(page)

    formgrader = lab_ui.open_formgrader(page)
    formgrader.locator("tr", has=formgrader.get_by_role("link", name=scratch.assignment_id, exact=True)).wait_for()
    screenshot(page, "formgrader-assignments")
    open_cohort(formgrader, scratch.assignment_id, "bob")
    rows = {row[1]: row for row in lab_ui.table_rows(formgrader)}
    assert set(rows) == {"ada", "bob"}
    # The mark schemes wait for nobody: only ada's written answers need a TA.
    assert rows["ada"][3] == "needs manual grading" and rows["ada"][4] == f"{code_points:g} / {total:g}"
    assert "needs manual grading" not in rows["bob"][3] and rows["bob"][4] == f"0 / {total:g}"
    screenshot(page, "formgrader-cohort")

    open_the_waiting_submission(formgrader, scratch.assignment_id, NOTEBOOK, submissions=2)

    # The lesson's math, typeset by MathJax from the TA's own server (no request left the machine).
    formgrader.locator("#notebook .MathJax").first.wait_for(state="attached")
    # Each question with its mark scheme is shown whole, with no score or comment box to type into by mistake.
    tasks = [answer.task_cell for answer in load_manifest().only([NOTEBOOK]).manual]
    assert formgrader.locator(".mark-scheme").count() == len(tasks) == 2
    for task in tasks:
        assert formgrader.locator(f"textarea#{task}-comment").count() == 0
        assert formgrader.locator(f"input.score#{task}").count() == 0
    assert formgrader.locator(".mark-scheme", has_text="Marking (3 points").count() == 1
    score_written_answers(page, formgrader, MANUAL_SCORES)
    comment_field = formgrader.locator(f"textarea#{COMMENTED}-comment")
    comment_field.scroll_into_view_if_needed()
    assert type_and_save(page, comment_field, COMMENT, "comment").ok
    comment_field.scroll_into_view_if_needed()
    screenshot(page, "formgrader-written-answer-graded")
    assert not (found := blocking_violations(frame_of(formgrader))), "\n".join(found)

    with open_gradebook(scratch) as gradebook:
        for cell, score in MANUAL_SCORES.items():
            grade = gradebook.find_grade(cell, NOTEBOOK, scratch.assignment_id, "ada")
            assert (grade.manual_score, grade.needs_manual_grade) == (score, False)
        assert gradebook.find_comment(COMMENTED, NOTEBOOK, scratch.assignment_id, "ada").manual_comment == COMMENT
        submission = gradebook.find_submission(scratch.assignment_id, "ada")
        assert (submission.score, submission.needs_manual_grade) == (code_points + sum(MANUAL_SCORES.values()), False)

    formgrader.get_by_role("link", name=scratch.assignment_id, exact=True).click()  # the grading page's breadcrumb
    open_cohort(formgrader, scratch.assignment_id, "bob")
    ada = formgrader.locator("#main-table tr", has_text="ada")
    ada.get_by_text(f"{code_points + sum(MANUAL_SCORES.values()):g} / {total:g}").wait_for()
    assert "needs manual grading" not in ada.inner_text()
    screenshot(page, "formgrader-cohort-after-grading")
    assert page.page_errors == []
