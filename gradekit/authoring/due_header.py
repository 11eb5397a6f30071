"""The due date at the top of every release notebook, where a student reads it first.

The header is a plain markdown cell (no nbgrader metadata, so grading keeps it as the student has it),
and the date also travels in the notebook's metadata, where Validate reads it to say how long is left.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import nbformat

from gradekit.core.due_words import when

HEADER_TAG = "kit-due-date"  # the header cell's tag: a release made again replaces it rather than adding one
METADATA_KEY = "kit_due"  # notebook metadata: the due date, ISO 8601 with its zone


def header_text(due: datetime.datetime) -> str:
    return (
        f"**Due {when(due)}.** Submit before then (nbgrader's Assignments tab, Submit). Work handed in later "
        "loses points as the course's late policy states; if you cannot make it, ask the course team for an "
        "extension before the due date."
    )


def with_due_header(notebook, due: datetime.datetime):
    """`notebook` with the due-date header as its first cell and the date in its metadata."""
    cells = [cell for cell in notebook.cells if HEADER_TAG not in cell.get("metadata", {}).get("tags", [])]
    header = nbformat.v4.new_markdown_cell(header_text(due), metadata={"tags": [HEADER_TAG]})
    header["id"] = HEADER_TAG  # nbformat's id is random: a release made twice must be identical
    notebook.cells = [header, *cells]
    notebook.metadata[METADATA_KEY] = due.isoformat()
    return notebook


def add_due_headers(release_dir: Path, due: datetime.datetime) -> None:
    """Put the header on every notebook of a release folder."""
    for path in sorted(release_dir.glob("*.ipynb")):
        nbformat.write(with_due_header(nbformat.read(path, as_version=4), due), path)
