"""One grading template per notebook: a pre-check grades one notebook, so its gradebook knows that one alone.

nbgrader's autograde makes a submission's empty grades for every notebook its
gradebook knows, then finds each notebook that was not handed in and zeroes
its grades, each a query and a commit: for a pre-check of one notebook out of
eleven, most of nbgrader's gradebook work was for the ten it never graded.
Each notebook's template is the assignment's template with every other
notebook removed from the gradebook (nbgrader's own `remove_notebook`); its
source folder is the whole assignment's, so the sealed checks, the hidden lines
every run cuts and the run's settings are the ones the TA's run grades with.
What the notebook is graded, cell by cell, is the same.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

from nbgrader.api import Gradebook

from gradekit.authoring.release import clone_workspace
from gradekit.core.course import Course
from gradekit.grading.grading_run import RUN_FILE


def notebook_templates(template: Course, root: Path) -> dict[str, Path]:
    """Notebook name -> the root of its own template under `root`, one for each notebook `template` grades."""
    with Gradebook(template.db_url, template.course_id) as gradebook:
        notebooks = [notebook.name for notebook in gradebook.find_assignment(template.assignment_id).notebooks]
    return {name: notebook_template(template, root / name, name) for name in sorted(notebooks)}


def notebook_template(template: Course, root: Path, notebook: str) -> Path:
    """A copy of `template` at `root` whose gradebook knows `notebook` and no other notebook of the assignment."""
    root.mkdir(parents=True)
    moved = clone_workspace(template, root, folders=("source",))
    shutil.copyfile(template.root / RUN_FILE, root / RUN_FILE)
    with Gradebook(moved.db_url, moved.course_id) as gradebook:
        others = [other.name for other in gradebook.find_assignment(moved.assignment_id).notebooks]
        for other in others:
            if other != notebook:
                gradebook.remove_notebook(other, moved.assignment_id)
    _compact(moved.root / "gradebook.db")  # a clone's gradebook is always this SQLite file
    return root


def _compact(gradebook: Path) -> None:
    """Rebuild the gradebook file without the pages the removed notebooks left empty: every check writes it afresh."""
    with contextlib.closing(sqlite3.connect(gradebook)) as database:
        database.execute("VACUUM")
