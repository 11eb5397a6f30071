"""Every proof the Security page names exists: a test function, a test module, a case a test builds by that
name, or a notebook's test cell. A claim whose proof was renamed or removed fails here, not in a reader's hands."""

import re

import pytest

from gradekit.core.course import REPO_ROOT

pytestmark = pytest.mark.unit

PAGE = (REPO_ROOT / "docs" / "pages" / "security.md").read_text()
TEST_SOURCES = "\n".join(path.read_text() for path in sorted((REPO_ROOT / "tests").rglob("*.py")))


def named(pattern: str) -> list[str]:
    return sorted(set(re.findall(pattern, PAGE)))


def test_every_test_the_page_names_is_a_test_function_or_a_notebooks_test_cell(manifest):
    cells = {test.cell for entry in manifest.notebooks for test in manifest.test_cells_of(entry.name)}
    names = named(r"`(test_[A-Za-z0-9_]+)`")
    assert len(names) > 50  # the page names its proofs
    missing = [name for name in names if name not in cells and not re.search(rf"def {name}\b", TEST_SOURCES)]
    assert missing == []


def test_every_test_module_the_page_names_is_there():
    paths = named(r"`(tests/[\w/.-]+\.py)`")
    assert paths and [path for path in paths if not (REPO_ROOT / path).is_file()] == []


def test_every_case_the_page_names_is_built_by_a_test_under_that_name():
    cases = named(r"`([a-z0-9]+(?:-[a-z0-9]+){2,})`")
    assert len(cases) > 20
    assert [case for case in cases if f'"{case}"' not in TEST_SOURCES and f"'{case}'" not in TEST_SOURCES] == []
