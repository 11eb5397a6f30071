"""The documentation site builds without a warning, and the README stays short with links that lead somewhere."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = Path(sys.executable).with_name("mkdocs")
README = ROOT / "README.md"
README_MOST_LINES = 200
# [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis.
PAGES = ROOT / "docs" / "pages"
PEOPLES_PAGES = ("students.md", "ta.md", "course-lead.md")
TESTED_SECTION = "\n## How it is tested\n"
# A test file or a module of the kit, by its path: a note for whoever maintains the kit, not a step.
IMPLEMENTATION_PATH = re.compile(r"`[^`]*\b(?:tests|gradekit)/[^`]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


@pytest.mark.nbgrader
def test_the_site_builds_strictly_without_a_warning(tmp_path):
    # Material prints a notice about its own end of life on every build; it says nothing about our pages.
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--config-file", "docs/mkdocs.yml", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    warnings = [line for line in output.splitlines() if "WARNING" in line]
    assert not warnings, "\n".join(warnings)
    assert (tmp_path / "site" / "index.html").is_file()


@pytest.mark.unit
def test_the_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MOST_LINES, f"README.md has {len(lines)} lines; move detail into docs/pages/"


@pytest.mark.unit
def test_every_relative_link_of_the_readme_points_at_a_file():
    text = README.read_text(encoding="utf-8")
    targets = [target for target in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:|#", target)]
    assert targets, "the README links into the documentation"
    missing = [target for target in targets if not (ROOT / target.split("#", 1)[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


@pytest.mark.nbgrader
def test_a_missing_figure_file_fails_the_build(tmp_path):
    """The figures are included with check_paths on: a page naming a figure that is not there cannot build."""
    pages = tmp_path / "pages"
    (pages / "figures").mkdir(parents=True)
    (pages / "index.md").write_text('# Figures\n\n--8<-- "absent.md"\n')
    config = (ROOT / "docs" / "mkdocs.yml").read_text(encoding="utf-8")
    config = re.sub(r"(?ms)^nav:.*?(?=^\S)", "", config)  # the one page above, no nav
    (tmp_path / "mkdocs.yml").write_text(config)
    result = subprocess.run(
        [
            str(MKDOCS),
            "build",
            "--strict",
            "--config-file",
            str(tmp_path / "mkdocs.yml"),
            "--site-dir",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
        timeout=300,
    )
    assert result.returncode != 0
    assert "absent.md" in result.stdout + result.stderr


@pytest.mark.unit
@pytest.mark.parametrize("name", PEOPLES_PAGES)
def test_a_page_for_people_keeps_test_and_module_paths_in_its_last_section(name):
    steps, tested = (PAGES / name).read_text(encoding="utf-8").split(TESTED_SECTION)
    assert not IMPLEMENTATION_PATH.findall(steps), f"{name}: move these into 'How it is tested'"
    assert IMPLEMENTATION_PATH.findall(tested), f"{name}: 'How it is tested' names no test"
    assert "\n## " not in tested, f"{name}: 'How it is tested' is the page's last section"
