"""Formgrader's grading page of a hostile submission, opened by the TA in Chromium on the TA's own server.

ada's 090_decisions carries the reference code, one answer that also displays every attack the
feedback page's test uses (a script, an onerror image, an onload SVG, a JavaScript and a markdown
output) plus an iframe whose document holds a script and an image whose width names an onload
handler, and a written answer holding a script, a javascript: link and headings named after every
graded cell's id (formgrader finds a cell's score box by that id). It is autograded by the real
`nbgrader autograde`. On the grading page none of it runs (each would set the page's title or
window.__pwned), while formgrader's own scripts do: the TA types a score for the written answer and
the gradebook holds it.
"""

import nbformat
import pytest
from test_feedback_page import ATTACK_MARKDOWN, ONE_PIXEL_PNG

from gradekit.authoring.release import new_workspace
from gradekit.core.manifest import load_manifest
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.grading.gradebook import open_gradebook
from gradekit.proof.subjects import answer_sources, fill_answers, written_answer_sources
from journeys import exchange, lab_ui
from journeys.test_ta_formgrader import NOTEBOOK, type_and_save

pytestmark = pytest.mark.browser

DISPLAYS_ATTACKS = f"""
from IPython.display import HTML, SVG, Javascript, Markdown, display
display(HTML("<script>document.title = 'pwned'</script><img src=x onerror=\\"window.__pwned = 1\\">"))
display(SVG("<svg xmlns='http://www.w3.org/2000/svg' onload='window.__pwned = 2'><script>window.__pwned = 9</script></svg>"))
display(Javascript("window.__pwned = 3"))
display(Markdown("<script>window.__pwned = 4</script>"))
display(HTML("<iframe srcdoc='<script>parent.__pwned = 10</script>'></iframe>"))
display({{"image/png": "{ONE_PIXEL_PNG}"}}, raw=True, metadata={{"image/png": {{"width": "1 onload=window.__pwned=11"}}}})
"""
JAVASCRIPT_LINK = "[see my notes](javascript:window.__pwned=8)"
GRADED = "answer_hand_graph"
SCORE = 1.5


def _grade_ids(scratch) -> list[str]:
    """The ids formgrader finds each graded cell's score box by (a heading named so once took it over)."""
    source = nbformat.read(scratch.source_dir / f"{NOTEBOOK}.ipynb", 4)
    return [
        cell.metadata["nbgrader"]["grade_id"] for cell in source.cells if cell.metadata.get("nbgrader", {}).get("grade")
    ]


@pytest.fixture
def hostile_course(course, tmp_path):
    """A scratch course of 090_decisions with ada's hostile submission autograded by nbgrader."""
    scratch = new_workspace(course, tmp_path / "course", (NOTEBOOK,))
    manifest = load_manifest().only([NOTEBOOK])
    sources = answer_sources(manifest, NOTEBOOK, None)
    first = next(iter(sources))
    sources[first] += "\n" + DISPLAYS_ATTACKS
    written = written_answer_sources(manifest, NOTEBOOK, scratch.source_dir / f"{NOTEBOOK}.ipynb")
    headings = "".join(f"\n\n###### {grade_id}" for grade_id in _grade_ids(scratch))
    written[GRADED] += f"\n\n{ATTACK_MARKDOWN} {JAVASCRIPT_LINK}{headings}"
    folder = scratch.submitted_dir / "ada" / scratch.assignment_id
    folder.mkdir(parents=True)
    release = scratch.release_dir / f"{NOTEBOOK}.ipynb"
    nbformat.write(fill_answers(release, sources | written), folder / f"{NOTEBOOK}.ipynb")
    run_nbgrader(scratch, "autograde", scratch.assignment_id, "--force")
    exchange_root = tmp_path / "exchange"
    exchange_root.mkdir()
    exchange.install_course_config(scratch)
    with open_gradebook(scratch) as gradebook:
        submission_id = gradebook.find_submission_notebook(NOTEBOOK, scratch.assignment_id, "ada").id
    return scratch, exchange_root, submission_id


def test_no_script_of_the_student_runs_in_formgraders_page_and_the_ta_still_grades(hostile_course, page, lab_for):
    scratch, exchange_root, submission_id = hostile_course
    autograded = nbformat.read(scratch.root / "autograded" / "ada" / scratch.assignment_id / f"{NOTEBOOK}.ipynb", 4)
    displayed = [o for cell in autograded.cells for o in cell.get("outputs", []) if o.output_type == "display_data"]
    assert len(displayed) == 6  # the attacks reached the graded notebook formgrader shows
    server = lab_for(scratch.root, exchange.instructor_environment(scratch, exchange_root))
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text) if "Content Security" in message.text else None)
    page.goto(server.url("lab"))  # the TA logs in; formgrader's API then knows the TA by the cookie
    lab_ui.wait_for_lab(page)
    page.goto(f"{server.base_url}/formgrader/submissions/{submission_id}/")
    # Formgrader's own scripts ran: its page variables are set and MathJax typeset the lesson's math.
    page.locator("#notebook .MathJax").first.wait_for(state="attached")
    assert page.evaluate("submission_id") == submission_id
    assert page.locator("#notebook").first.inner_text().count("<script>window.__pwned = 5</script>") == 1
    notes = page.get_by_role("link", name="see my notes")
    assert not (notes.get_attribute("href") or "").lower().startswith("javascript")
    notes.click()
    page.wait_for_timeout(500)
    assert page.evaluate("window.__pwned") is None
    assert page.title() == NOTEBOOK
    assert not any("JavaScript URL" in v for v in violations), violations  # the link never reached the policy
    # The written answer's headings named after the graded cells took no id: each score box is its cell's.
    grade_ids = _grade_ids(scratch)
    assert grade_ids and all(page.locator(f'[id="{grade_id}"]').count() == 1 for grade_id in grade_ids)

    score_field = page.locator(f"input.score.needs_manual_grade#{GRADED}")
    score_field.scroll_into_view_if_needed()
    assert type_and_save(page, score_field, f"{SCORE:g}", "grade").ok
    page.locator(f"input.score#{GRADED}:not(.needs_manual_grade)").wait_for()
    with open_gradebook(scratch) as gradebook:
        grade = gradebook.find_grade(GRADED, NOTEBOOK, scratch.assignment_id, "ada")
        assert (grade.manual_score, grade.needs_manual_grade) == (SCORE, False)
    assert page.evaluate("window.__pwned") is None
    assert page.page_errors == []
