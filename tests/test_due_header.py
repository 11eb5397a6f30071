"""The due date heads every release notebook and travels in its metadata."""

import datetime

import nbformat
import pytest

from gradekit.authoring.due_header import HEADER_TAG, METADATA_KEY, with_due_header

pytestmark = pytest.mark.unit

DUE = datetime.datetime(2026, 12, 18, 23, 0, tzinfo=datetime.timezone.utc)


def test_the_header_comes_first_says_the_date_and_a_second_release_replaces_it(course):
    notebook = nbformat.read(course.release_dir / "010_history.ipynb", as_version=4)
    cells = len(notebook.cells)
    headed = with_due_header(with_due_header(notebook, DUE - datetime.timedelta(days=1)), DUE)
    nbformat.validate(headed)
    assert len(headed.cells) == cells + 1
    first = headed.cells[0]
    assert (first.cell_type, first.id, first.metadata) == ("markdown", HEADER_TAG, {"tags": [HEADER_TAG]})
    assert first.source.startswith("**Due Friday 18 December 2026, 23:00 UTC.**")
    assert "nbgrader" not in first.metadata
    assert headed.metadata[METADATA_KEY] == "2026-12-18T23:00:00+00:00"
