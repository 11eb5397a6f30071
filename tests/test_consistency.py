import nbformat
import pytest

from gradekit.authoring import cells
from gradekit.authoring.consistency import catalog_problems, demo_problems, notebook_problems, static_problems
from gradekit.authoring.solutions import NegativeControl
from gradekit.core.catalog import Misconception
from gradekit.core.manifest import Exercise, Manifest, NotebookEntry, TestCell

pytestmark = pytest.mark.unit


def test_the_committed_course_is_consistent(course, manifest):
    assert static_problems(course, manifest) == []


def _fixture(tmp_path, points=2, extra_graded=False, named="m-one-x"):
    test_source = f'expect(False, "bad", "{named}")'
    notebook_cells = [
        cells.answer_cell("answer_f", "def f():\n    pass"),
        cells.test_cell("test_f", points, test_source),
    ]
    if extra_graded:
        notebook_cells.append(cells.test_cell("test_unlisted", 1, "pass"))
    nbformat.write(nbformat.v4.new_notebook(cells=notebook_cells), tmp_path / "010_x.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "020_stray.ipynb")
    return Manifest(
        "a",
        (NotebookEntry("010_x", "1", "X", "r", "c"),),
        (Exercise("010_x", "answer_f", ("f",), (TestCell("test_f", 2, ("m-one-x",)),)),),
    )


def test_points_unlisted_cells_and_stray_notebooks_are_reported(tmp_path):
    manifest = _fixture(tmp_path, points=4, extra_graded=True)
    problems = notebook_problems(manifest, tmp_path)
    assert any("worth 4 points, the manifest says 2" in p for p in problems)
    assert any("test_unlisted is graded but not in the manifest" in p for p in problems)
    assert any("020_stray.ipynb is in source/ but not in the manifest" in p for p in problems)
    assert not any("020_stray" in p for p in notebook_problems(manifest, tmp_path, complete=False))


def test_unproven_targets_and_unknown_ids_are_reported(tmp_path):
    manifest = _fixture(tmp_path, named="never-catalogued-id")
    catalog = {"m-one-x": Misconception("m-one-x", "t", "b", "d")}
    assert "test_f targets 'm-one-x' but no negative control proves it" in catalog_problems(
        manifest, catalog, (), tmp_path
    )
    stray = NegativeControl("010-f__x", "010_x", "f", "m-two-x", ("test_f",), "def f(): pass")
    problems = catalog_problems(manifest, catalog, (stray,), tmp_path)
    assert "control 010-f__x names unknown misconception 'm-two-x'" in problems
    assert "control 010-f__x fails test_f, which does not target 'm-two-x'" in problems
    assert "010_x names 'never-catalogued-id', which is not in the catalog" in problems


def test_a_demo_may_define_nothing_another_code_cell_reads(tmp_path):
    shown = cells.demo_cell("demo_x", "x = 2\nprint(x)")
    assert cells.is_demo(shown) and not cells.is_demo(cells.setup_cell("setup", "import math"))
    reads_it = cells.test_cell("test_f", 2, "assert x == 2")
    binds_its_own = cells.test_cell("test_g", 1, "x = 3\nassert x == 3")
    notebook = nbformat.v4.new_notebook(cells=[shown, reads_it, binds_its_own])
    for cell in notebook.cells:
        cell.id = cell.metadata.nbgrader.grade_id
    problems = demo_problems("010_x", {cell.id: cell for cell in notebook.cells})
    assert problems == ["010_x: test_f reads 'x', which the demo demo_x defines"]
