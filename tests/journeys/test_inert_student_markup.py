"""A feedback page built from a hostile notebook, opened from disk in Chromium as the TA opens it.

The notebook's answer cell displays a script, an image whose onerror runs code, an SVG with
onload, a JavaScript output and a markdown output with a script; the student's written answer
holds a script too. Each would set the page's title or window.__pwned if it ran.
"""

import contextlib
from pathlib import Path

import pytest
from test_feedback_page import attack_page

from gradekit.grading.feedback_mathjax import bundle_mathjax
from journeys.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser


@pytest.fixture
def file_browser(playwright):
    """A headless Chromium that opens pages from disk (the journeys' browser lets only loopback through)."""
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        yield chromium
    finally:
        chromium.close()


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
