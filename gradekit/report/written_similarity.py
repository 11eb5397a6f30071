"""Which written answers look copied: every pair of students' free-text answers compared by shared word runs.

Code goes through copydetect's fingerprints (similarity.py); prose does not
tokenize like code, so written answers are compared here on runs of
`RUN_WORDS` words (lower-cased, punctuation dropped). Runs the release's own
answer cells hold (the prompt text a student may keep) are boilerplate and never
count. A pair's share on each side is the fraction of that side's runs found in
the other's, as for code; pairs are ranked with the code pairs.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from gradekit.report.similarity import SimilarPair

RUN_WORDS = 5  # shorter runs match stock phrases of the lesson; longer ones miss a copy with a word changed
WORD = re.compile(r"[a-z0-9_]+")
LABEL = re.compile(r"^\[[\w-]+\]$", re.MULTILINE)  # the "[answer cell]" line above each answer, for the reader
WRITTEN_SUFFIX = " (written)"  # how a notebook's written answers are named beside its code


def written_cells(notebook) -> list[tuple[str, str]]:
    """(grade id, text) of every free-response answer cell (nbgrader's Markdown solution cells), in order."""
    cells = []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "markdown" and meta.get("solution"):
            cells.append((meta.get("grade_id", ""), cell.get("source", "")))
    return cells


def runs(text: str) -> set[tuple[str, ...]]:
    """The runs of `RUN_WORDS` words of `text`, without the labels naming its answer cells."""
    words = WORD.findall(LABEL.sub(" ", text).lower())
    return {tuple(words[i : i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)}


def written_text(notebook: NotebookNode) -> str:
    """The notebook's written answers as one text, each under its cell's label; empty when it has none."""
    return "\n\n".join(f"[{grade_id}]\n{source.strip()}" for grade_id, source in written_cells(notebook))


def written_starters(release_dir: Path) -> dict[str, str]:
    """The release's text of each notebook's written answer cells: what every student was given."""
    starters = {}
    for path in sorted(Path(release_dir).glob("*.ipynb")):
        cells = written_cells(nbformat.read(path, as_version=4))
        if cells:
            starters[path.stem + WRITTEN_SUFFIX] = "\n\n".join(source for _, source in cells)
    return starters


def rank_written(texts: dict[str, dict[str, str]], starters: dict[str, str]) -> list[SimilarPair]:
    """Every pair of students on every notebook's written answers, most alike first; pairs sharing nothing left out."""
    pairs = []
    for notebook in sorted(texts):
        given = runs(starters.get(notebook, ""))
        own = {student: runs(text) - given for student, text in texts[notebook].items()}
        for first, second in itertools.combinations(sorted(own), 2):
            shared = own[first] & own[second]
            if shared:
                shares = (len(shared) / len(own[first]), len(shared) / len(own[second]))
                pairs.append(SimilarPair(notebook, first, second, shares, ()))
    return sorted(pairs, key=lambda pair: (-pair.score, pair.notebook, pair.first, pair.second))
