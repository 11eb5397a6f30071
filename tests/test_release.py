"""release/ is exactly what nbgrader generate_assignment makes from source/ today."""

import json

import pytest

from gradekit.authoring.release import new_workspace

pytestmark = pytest.mark.nbgrader


def _files(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_committed_release_matches_a_fresh_generate_assignment(course, tmp_path):
    notebooks = tuple(path.stem for path in sorted(course.source_dir.glob("*.ipynb")))
    fresh, committed = new_workspace(course, tmp_path / "course", notebooks).release_dir, course.release_dir
    assert _files(committed) == _files(fresh), (
        "release/ has other files than source/ generates: run `python -m gradekit release`"
    )
    for relative in _files(fresh):
        if relative.suffix == ".ipynb":
            same = json.loads((fresh / relative).read_text()) == json.loads((committed / relative).read_text())
        else:
            same = (fresh / relative).read_bytes() == (committed / relative).read_bytes()
        assert same, f"release/{relative} is stale: run `python -m gradekit release`"
