"""The source notebooks are exactly what their scripts render (no hand edits drift from the scripts)."""

import shutil

import pytest

from gradekit.authoring.sync import notebook_drift, sync_notebooks
from gradekit.core.manifest import SCRIPTS_DIR

pytestmark = pytest.mark.unit


def test_every_source_notebook_is_what_its_script_renders(course):
    assert notebook_drift(course.source_dir) == []


def test_a_hand_edited_notebook_is_drift_and_sync_rewrites_it(course, tmp_path):
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    shutil.copyfile(SCRIPTS_DIR / "010_history.py", scripts / "010_history.py")
    moved = course.at(tmp_path / "course")
    moved.source_dir.mkdir(parents=True)
    notebook = moved.source_dir / "010_history.ipynb"
    notebook.write_text((course.source_dir / "010_history.ipynb").read_text().replace("Tensors", "Arrays", 1))
    (moved.source_dir / "999_stray.ipynb").write_text("{}")
    assert notebook_drift(moved.source_dir, scripts) == [
        "010_history.ipynb differs from its script; run `python -m gradekit sync`",
        "999_stray.ipynb has no script in solutions/notebooks/",
    ]
    assert sync_notebooks(moved, scripts) == ["010_history"]
    assert notebook.read_text() == (course.source_dir / "010_history.ipynb").read_text()
    assert sync_notebooks(moved, scripts) == []
