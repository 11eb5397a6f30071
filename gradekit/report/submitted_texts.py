"""What the students wrote, for the similarity report: each submitted notebook read once, after grading.

A notebook is read as intake reads it (never through a link, never waiting on a
FIFO or a device, under the size cap), and only the assignment's notebooks are
read: whatever else a student left in their folder is not the report's to open.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from gradekit.core.bounded_files import read_notebook
from gradekit.report.answer_text import answer_text
from gradekit.report.written_similarity import WRITTEN_SUFFIX, written_text


@dataclasses.dataclass(frozen=True)
class SubmittedTexts:
    code: dict[str, dict[str, str]]  # notebook -> student -> the code of their answer cells
    written: dict[str, dict[str, str]]  # notebook (written) -> student -> their written answers; none: left out
    unreadable: dict[str, str]  # student -> why a notebook of theirs could not be read


def submitted_texts(submitted_dir: Path, assignment: str, notebooks: Iterable[str]) -> SubmittedTexts:
    """Each student's code and written answers in the assignment's `notebooks`; an unreadable one is named."""
    texts = SubmittedTexts({}, {}, {})
    for student, path in submitted_notebooks(submitted_dir, assignment, notebooks):
        try:
            notebook = read_notebook(path)
            code, written = answer_text(notebook), written_text(notebook)
        except Exception as error:  # a broken submission is noted, never fatal to the report
            texts.unreadable[student] = f"{path.name}: {type(error).__name__}: {error}"
            continue
        texts.code.setdefault(path.stem, {})[student] = code
        if written:
            texts.written.setdefault(path.stem + WRITTEN_SUFFIX, {})[student] = written
    return texts


def submitted_notebooks(submitted_dir: Path, assignment: str, notebooks: Iterable[str]) -> Iterator[tuple[str, Path]]:
    """(student, path) of each of the assignment's `notebooks` a student's folder holds something under, by student."""
    names = sorted(set(notebooks))
    for folder in sorted(Path(submitted_dir).glob(f"*/{assignment}")):
        for name in names:
            path = folder / f"{name}.ipynb"
            if os.path.lexists(path):
                yield folder.parent.name, path
