"""The pages the kit writes to disk for students and TAs, opened in Chromium and checked by axe-core.

No serious or critical violation may remain on the feedback page, the similarity page or the class
report (the class report's own journey checks it too, with its screenshot).
"""

from pathlib import Path

import pytest
from class_report_fixtures import CATALOG, MANIFEST, ROWS
from test_feedback_page import attack_page

from gradekit.grading.feedback_mathjax import bundle_mathjax
from gradekit.report.class_report import write_class_report
from gradekit.report.similarity import rank_pairs
from gradekit.report.similarity_page import similarity_page
from journeys.accessibility import blocking_violations

pytestmark = pytest.mark.browser

# An answer with a line far wider than the page: its box scrolls sideways, so it must take the keyboard's focus.
LONG_LINE = "    weights = torch.tensor([" + ", ".join(f"{i}.0" for i in range(120)) + "])\n"
ANSWER = "def grad(x):\n" + LONG_LINE + "    y = (x ** 2).sum()\n    y.backward()\n    return x.grad\n"


def violations_on(browser, page_file: Path) -> list[str]:
    tab = browser.new_page()
    try:
        tab.goto(page_file.as_uri())
        tab.wait_for_load_state("load")
        return blocking_violations(tab)
    finally:
        tab.close()


def test_the_feedback_page_has_no_serious_accessibility_violation(file_browser, tmp_path):
    page_file = tmp_path / "feedback" / "student" / "autograd" / "010_history.html"
    page_file.parent.mkdir(parents=True)
    page_file.write_text(attack_page())
    bundle_mathjax(tmp_path / "feedback")
    assert violations_on(file_browser, page_file) == []


def test_the_similarity_page_has_no_serious_accessibility_violation(file_browser, tmp_path):
    texts = {"ann": ANSWER * 2, "bob": ANSWER * 2 + "\n# mine"}
    page_file = tmp_path / "similarity.html"
    page_file.write_text(similarity_page([rank_pairs(texts, "", "010_history")[0]], {"010_history": texts}, {}))
    assert violations_on(file_browser, page_file) == []


def test_the_class_report_has_no_serious_accessibility_violation(file_browser, tmp_path):
    report = write_class_report(tmp_path / "class-report", MANIFEST, ROWS, CATALOG)
    assert violations_on(file_browser, report) == []
