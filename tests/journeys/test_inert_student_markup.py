"""Pages the kit draws from hostile submissions, opened from disk in Chromium as the TA opens them.

The feedback page: the notebook's answer cell displays a script, an image whose onerror runs code,
an SVG with onload, a JavaScript output, a markdown output with a script and an image whose size
names event handlers; the student's written answer holds a script too. The class report and the
similarity page: the student's folder name, their error message, what a finding or note quotes of
their notebook and their answer's code each carry markup. Each would set the page's title or
window.__pwned if it ran.
"""

import contextlib
from pathlib import Path

import pytest
from class_report_fixtures import CATALOG, MANIFEST, ROWS, X, Y, graded
from test_feedback_page import attack_page

from gradekit.core.notes import Finding, FindingKind, Note, NoteKind
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status
from gradekit.grading.feedback_mathjax import bundle_mathjax
from gradekit.report.class_report import write_class_report
from gradekit.report.similarity import SimilarPair, rank_pairs
from gradekit.report.similarity_page import similarity_page

pytestmark = pytest.mark.browser


@contextlib.contextmanager
def opened_feedback_page(browser, folder: Path, html: str):
    """`html` written where feedback pages lie, beside the MathJax they load, and opened from disk once typeset."""
    feedback = folder / "feedback"
    page_file = feedback / "student" / "autograd" / "010_history.html"
    page_file.parent.mkdir(parents=True)
    page_file.write_text(html)
    bundle_mathjax(feedback)
    tab = browser.new_page()
    try:
        tab.goto(page_file.as_uri())
        # MathJax still runs under the page's policy: the student's math is typeset.
        tab.wait_for_selector("#notebook .MathJax", state="attached")
        yield tab
    finally:
        tab.close()


def test_no_payload_of_the_student_runs_while_the_diagnosis_and_the_math_are_shown(file_browser, tmp_path):
    with opened_feedback_page(file_browser, tmp_path, attack_page()) as tab:
        assert tab.evaluate("window.__pwned") is None
        assert tab.title() == "010_history"
        assert "x.grad was written by hand" in tab.locator("#toc li.failed").inner_text()
        assert "<script>window.__pwned = 5</script>" in tab.locator("#notebook").first.inner_text()


def test_the_pages_policy_alone_stops_a_script_the_sanitizer_would_have_missed(file_browser, tmp_path):
    missed = '<script>window.__pwned = 6</script><img src=x onerror="window.__pwned = 7">'
    html = attack_page().replace('<div id="toc">', missed + '<div id="toc">', 1)
    with opened_feedback_page(file_browser, tmp_path, html) as tab:
        assert tab.evaluate("window.__pwned") is None


# Markup that would run in a page, each payload setting window.__pwned; the quote ends an attribute.
PAYLOAD = (
    '"\'><script>window.__pwned = 11</script><img src=x onerror="window.__pwned = 12"><svg onload=window.__pwned=13>'
)


def hostile_rows() -> tuple[Outcome, ...]:
    """The class report's cohort, with the student's own words wherever a row can carry them."""
    hostile = graded(
        f"mallory{PAYLOAD}",
        0,
        3,
        0,
        5,
        ("first-wrong-idea",),
        notes=(Note(NoteKind.LEFT_OUT, PAYLOAD, items=(PAYLOAD,)),),
        findings=(Finding(FindingKind.FORGING_METHOD, X, f"answer_f{PAYLOAD}", (PAYLOAD,)),),
        status=Status.FLAGGED,
    )
    broken = Outcome(
        student_id=f"trudy{PAYLOAD}", status=Status.FAILED, message=f"malformed notebook JSON: {PAYLOAD}", grades=None
    )
    return (*ROWS, hostile, broken)


def opened_from_disk(browser, page_file: Path):
    tab = browser.new_page()
    tab.goto(page_file.as_uri())
    tab.wait_for_load_state("load")
    return tab


def test_no_payload_of_a_student_runs_in_the_class_report(file_browser, tmp_path):
    feedback = tmp_path / "feedback"
    for student in (f"mallory{PAYLOAD}", f"trudy{PAYLOAD}"):
        (feedback / student / "a").mkdir(parents=True)
        (feedback / student / "a" / f"{Y}.html").write_text("<p>feedback</p>")
    report = write_class_report(tmp_path / "class-report", MANIFEST, hostile_rows(), CATALOG, feedback, "a")
    tab = opened_from_disk(file_browser, report)
    try:
        assert tab.evaluate("window.__pwned") is None
        assert tab.evaluate("document.querySelectorAll('img[onerror], svg[onload], script').length") == 0
        assert f"malformed notebook JSON: {PAYLOAD}" in tab.locator("body").inner_text()
    finally:
        tab.close()


def test_no_payload_of_a_student_runs_in_the_similarity_page(file_browser, tmp_path):
    code = f"def grad(x):\n    # </pre>{PAYLOAD}\n    y = (x ** 2).sum()\n    y.backward()\n    return x.grad\n" * 3
    texts = {f"ann{PAYLOAD}": code, "bob": code + "\n# mine"}
    pairs = [
        rank_pairs(texts, "", "010_history")[0],
        SimilarPair("010_history", f"ann{PAYLOAD}", "bob", (1.0, 1.0), ()),
    ]
    page_file = tmp_path / "similarity.html"
    page_file.write_text(similarity_page(pairs, {"010_history": texts}, {}))
    tab = opened_from_disk(file_browser, page_file)
    try:
        assert tab.evaluate("window.__pwned") is None
        assert tab.evaluate("document.querySelectorAll('img, svg, script').length") == 0
        assert "<script>window.__pwned = 11</script>" in tab.locator("pre").first.inner_text()
    finally:
        tab.close()
