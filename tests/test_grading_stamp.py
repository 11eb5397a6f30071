"""What graded a row: the checks' digest follows the source notebooks and helpers, the kit's version its code."""

import datetime
import shutil

import nbformat
import pytest

from gradekit.core.grading_stamp import GradingStamp, checks_digest, kit_version, stamp_now

pytestmark = pytest.mark.unit

NOTEBOOKS = ("010_history", "090_decisions")


@pytest.fixture
def source(course, tmp_path):
    folder = tmp_path / "source"
    shutil.copytree(course.source_dir, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _tighten_a_hidden_test(notebook_path) -> None:
    notebook = nbformat.read(notebook_path, as_version=4)
    cell = next(c for c in notebook.cells if "### END HIDDEN TESTS" in c.source)
    cell.source = cell.source.replace("### END HIDDEN TESTS", "assert True\n### END HIDDEN TESTS")
    nbformat.write(notebook, notebook_path)


def test_the_digest_changes_with_a_hidden_test_of_a_graded_notebook_and_nothing_else(source):
    before = checks_digest(source, NOTEBOOKS)
    _tighten_a_hidden_test(source / "020_leaves.ipynb")  # not graded in this run
    assert checks_digest(source, NOTEBOOKS) == before
    _tighten_a_hidden_test(source / "010_history.ipynb")
    assert checks_digest(source, NOTEBOOKS) != before


def test_the_digest_follows_the_helper_modules_the_checks_import(source):
    before = checks_digest(source, NOTEBOOKS)
    helper = source / "autograd_checks.py"
    helper.write_text(helper.read_text() + "\n# a fixed check\n")
    assert checks_digest(source, NOTEBOOKS) != before


def test_a_stamp_names_the_kit_and_the_run_start_in_utc_and_reads_back_from_its_words(source):
    start = datetime.datetime(2026, 12, 3, 9, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    stamp = stamp_now(source, NOTEBOOKS, start)
    assert stamp.graded_at == "2026-12-03T08:30:00+00:00"
    assert stamp.kit_version == kit_version() and stamp.kit_version.startswith("gradekit-")
    assert stamp.checks_digest == checks_digest(source, NOTEBOOKS) and len(stamp.checks_digest) == 16
    assert GradingStamp.from_words(stamp.words()) == stamp
