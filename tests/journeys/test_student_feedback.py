"""The feedback page as a student reads it, through a running Jupyter server.

One student holding a misconception is autograded and given feedback by the
real nbgrader commands; the page is then opened where the server shows files.
The diagnosis must wrap inside its box, the summary must say which check failed
and why, and the lesson's math must be typeset by the MathJax the server itself
serves, with no request leaving the machine.
"""

import pytest

from gradekit.authoring.solutions import load_controls
from gradekit.core.course import REPO_ROOT
from gradekit.core.manifest import load_manifest
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.proof.subjects import Subject, write_submission
from journeys import exchange

pytestmark = pytest.mark.browser

NOTEBOOK = "010_history"
CONTROL = f"{NOTEBOOK.split('_')[0]}-square_sum_grad__no_reduction"
FAILED_CELL = "test_square_sum_grad"
SCREENSHOT = REPO_ROOT / "test-artifacts" / "feedback.png"

# Every element of nbgrader's page that holds a cell's output text.
OVERFLOWING_OUTPUTS = """() => Array.from(document.querySelectorAll('.output_subarea, .output_subarea pre'))
    .filter(box => box.scrollWidth > box.clientWidth)
    .map(box => box.innerText.slice(0, 80))"""


def test_feedback_wraps_the_diagnosis_names_the_failure_and_typesets_math(history_course, tmp_path, page, lab_for):
    scratch = history_course
    manifest = load_manifest().only([NOTEBOOK])
    control = next(c for c in load_controls(manifest) if c.name == CONTROL)
    student = control.student_id
    write_submission(scratch, scratch.release_dir, manifest, Subject(student, (NOTEBOOK,), control))
    run_nbgrader(scratch, "autograde", scratch.assignment_id, "--force")
    run_nbgrader(scratch, "generate_feedback", scratch.assignment_id, "--force")
    feedback = scratch.feedback_dir / student / scratch.assignment_id / f"{NOTEBOOK}.html"
    assert "cdnjs" not in feedback.read_text()
    assert "Content-Security-Policy" in feedback.read_text()  # and math is still typeset below

    server = lab_for(scratch.root, exchange.instructor_environment(scratch, tmp_path / "exchange"))
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(server.url(f"files/{feedback.relative_to(scratch.root)}"))

    page.wait_for_selector(".MathJax", state="attached")
    assert page.locator("#notebook .MathJax").count() > 0
    summary = page.locator("#toc li.failed").inner_text()
    assert FAILED_CELL in summary and f"{control.misconception}:" in summary, summary
    assert "0 / 3" in summary, summary
    diagnosis = page.locator(".output_error").first
    assert control.misconception in diagnosis.inner_text()
    assert page.evaluate(OVERFLOWING_OUTPUTS) == []

    page.evaluate("() => window.scrollTo(0, 0)")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))
    # about:, data: and blob: addresses name no machine (the page's typesetting now asks for about:blank).
    local = (server.base_url + "/", "about:", "data:", "blob:")
    off_the_machine = [url for url in requested if not url.startswith(local)]
    assert off_the_machine == []
    assert page.page_errors == []
