"""The TA reads the demo class's report from disk, follows a student's feedback link, and the README shows it.

The demo's class (demo_cohort.py) is graded on three of its notebooks, one of them
090_decisions with its written answers, so that the test takes a minute rather than
the demo's two. The page is opened as a file: nothing may be fetched but the course's
own files, and the feedback page it links to typesets its math from the MathJax copy
beside the feedback. The screenshot of the report is the one the README shows.
"""

import re

import pytest

from gradekit.authoring.solutions import load_controls
from gradekit.commands.demo import demo_course, run_demo
from gradekit.commands.demo_cohort import demo_cohort
from gradekit.core.course import REPO_ROOT

pytestmark = pytest.mark.browser

NOTEBOOKS = ["040_raw_mlp", "050_safe_updates", "090_decisions"]
README_SCREENSHOT = REPO_ROOT / "docs" / "pages" / "screenshots" / "demo-class-report.png"


@pytest.fixture
def demo_report(course, manifest, tmp_path):
    narrow = manifest.only(NOTEBOOKS)
    scratch = demo_course(course, narrow, tmp_path / "course")
    assert run_demo(scratch, narrow) == 0
    return scratch, demo_cohort(narrow, load_controls(narrow))


def test_ta_reads_the_demo_class_report_and_a_feedback_page_from_disk(demo_report, page, screenshot):
    scratch, cohort = demo_report
    report = scratch.root / "class-report" / "report.html"
    page.route(re.compile(rf"^file://{re.escape(str(scratch.root))}/"), lambda route: route.continue_())
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(report.as_uri())

    headline = page.locator("#headline").inner_text()
    waiting = re.search(r"(\d+)\s*with written answers waiting for a TA \((\d+) points\)", headline)
    assert waiting, headline
    assert int(waiting.group(1)) == sum(1 for s in cohort if s.written) and int(waiting.group(2)) > 0

    # Who to reach out to comes right after the headline, before the figures.
    titles = page.locator("h2").all_inner_texts()
    assert titles[:2] == ["Students to reach out to", "Scores"], titles
    # The exercise table starts with what needs a look: weak cells first, highlighted.
    table = page.locator("table", has=page.locator("th", has_text="share of points earned"))
    first = table.locator("tr").nth(1)
    assert "flagged" in (first.get_attribute("class") or "")
    assert "weak:" in first.inner_text()
    written_rows = table.locator("tr", has_text="written, graded by a TA")
    assert written_rows.count() == 2 and "waiting for a TA" in written_rows.first.inner_text()

    reach_out = page.locator("table", has=page.locator("th", has_text="why")).inner_text()
    late = next(s for s in cohort if s.late)
    broken = next(s for s in cohort if s.broken)
    assert re.search(rf"{late.student_id}\s.*after the due date", reach_out), reach_out
    assert re.search(
        rf"{broken.student_id}\s.*{broken.broken[0]}\.ipynb, which is not a readable notebook", reach_out
    ), reach_out
    page.screenshot(path=str(README_SCREENSHOT), full_page=True)
    screenshot(page, "demo-class-report")

    # A student's feedback, as the report links it: the lesson's math typeset by the local MathJax copy.
    student = next(s for s in cohort if s.written and not s.broken)
    page.locator("a", has_text=re.compile(rf"^{student.student_id}$")).first.click()
    page.wait_for_url(re.compile(r"/feedback/.*\.html$"))
    page.goto(page.url.rsplit("/", 1)[0] + "/090_decisions.html")
    page.locator(".MathJax, .MathJax_CHTML, mjx-container").first.wait_for(state="attached")
    screenshot(page, "demo-feedback-from-disk")
    assert page.page_errors == []
