"""The documentation site, built as a reader gets it, opened in Chromium and checked by axe-core on every page."""

import subprocess
import sys
from pathlib import Path

import pytest

from gradekit.core.course import REPO_ROOT
from journeys.accessibility import blocking_violations

pytestmark = pytest.mark.browser

MKDOCS = Path(sys.executable).parent / "mkdocs"
PAGES = sorted(path.stem for path in (REPO_ROOT / "docs" / "pages").glob("*.md"))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("docs") / "site"
    build = [str(MKDOCS), "build", "--quiet", "--config-file", "docs/mkdocs.yml", "--site-dir", str(folder)]
    subprocess.run(build, cwd=REPO_ROOT, check=True, capture_output=True)
    return folder


@pytest.mark.parametrize("name", PAGES)
def test_no_page_of_the_docs_site_has_a_serious_accessibility_violation(file_browser, site, name):
    tab = file_browser.new_page()
    try:
        tab.goto((site / f"{name}.html").as_uri())
        tab.wait_for_load_state("load")
        found = blocking_violations(tab)
        assert not found, "\n".join(found)
    finally:
        tab.close()
