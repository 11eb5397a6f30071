"""The TA opens the class report straight from disk: no server, nothing fetched from anywhere."""

import pytest
from class_report_fixtures import CATALOG, MANIFEST, ROWS

from gradekit.core.course import REPO_ROOT
from gradekit.report.class_report import write_class_report
from journeys.accessibility import blocking_violations

pytestmark = pytest.mark.browser

SCREENSHOT = REPO_ROOT / "test-artifacts" / "class-report.png"


def test_ta_opens_the_class_report_from_a_file(page, tmp_path):
    report = write_class_report(tmp_path / "class-report", MANIFEST, ROWS, CATALOG)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    # The module's browser refuses every address but the lab server's; this page's own file may load.
    page.route(report.as_uri(), lambda route: route.continue_())
    page.goto(report.as_uri())
    headline = page.locator("#headline")
    assert headline.is_visible()
    assert "submissions" in headline.inner_text() and "median autograded score of 11" in headline.inner_text()
    histogram = page.locator("#histogram img")
    assert histogram.is_visible()
    # a broken data URI still lays out a box; a decoded image has its own width
    assert histogram.evaluate("image => image.complete && image.naturalWidth") > 200
    assert [url for url in requested if not url.startswith(("file:", "data:"))] == []
    assert blocking_violations(page) == []
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
