import nbformat
import pytest

from gradekit.authoring import cells
from gradekit.authoring.consistency import (
    advice_problems,
    catalog_problems,
    demo_problems,
    notebook_problems,
    static_problems,
)
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


def _two_mistakes(tmp_path, test_source: str) -> Manifest:
    """A notebook whose test cell targets a bare backward() and a sum in place of the cotangent."""
    notebook_cells = [cells.answer_cell("answer_f", "def f():\n    pass"), cells.test_cell("test_f", 2, test_source)]
    nbformat.write(nbformat.v4.new_notebook(cells=notebook_cells), tmp_path / "021_x.ipynb")
    return Manifest(
        "a",
        (NotebookEntry("021_x", "2.1", "X", "r", "c"),),
        (Exercise("021_x", "answer_f", ("f",), (TestCell("test_f", 2, ("bare-backward-x", "sum-for-cotangent-x")),)),),
    )


TWO_MISTAKES = {
    "bare-backward-x": Misconception("bare-backward-x", "t", "b", "backward() needs a cotangent: pass it v."),
    "sum-for-cotangent-x": Misconception(
        "sum-for-cotangent-x", "t", "b", "a sum picks v = ones; call y.backward(v).", ("reduce the output", ".sum()")
    ),
}


def test_a_diagnosis_that_recommends_another_mistake_of_its_notebook_is_refused(tmp_path):
    leading = 'expect(False, "no cotangent: reduce the output to one number first", "bare-backward-x")'
    problems = advice_problems(_two_mistakes(tmp_path, leading), TWO_MISTAKES, tmp_path)
    assert problems == [
        "021_x: the diagnosis of 'bare-backward-x' (021_x/test_f) advises 'reduce the output', which is what "
        "'sum-for-cotangent-x' does, a mistake 021_x also tests: advise the way forward instead"
    ]
    forward = 'expect(False, "no cotangent: pass the given v, as y.backward(v), not a sum", "bare-backward-x")'
    assert advice_problems(_two_mistakes(tmp_path, forward), TWO_MISTAKES, tmp_path) == []


def test_the_catalog_and_the_shared_error_table_are_held_to_the_same_rule(tmp_path):
    catalog = dict(TWO_MISTAKES)
    catalog["bare-backward-x"] = Misconception("bare-backward-x", "t", "b", "one number needed; reduce the output.")
    (tmp_path / "autograd_checks.py").write_text(
        'COMMON_ERRORS = (("scalar outputs", "bare-backward-x", "no cotangent: call y.sum().backward()"),)\n'
    )
    problems = advice_problems(_two_mistakes(tmp_path, "call_answer(f, 1)"), catalog, tmp_path)
    assert any("'bare-backward-x' (the catalog) advises 'reduce the output'" in p for p in problems), problems
    assert any("'bare-backward-x' (autograd_checks.py) advises '.sum()'" in p for p in problems), problems
    # A call with its own error table leaves the shared one out.
    problems = advice_problems(_two_mistakes(tmp_path, "call_answer(f, 1, known_errors=())"), catalog, tmp_path)
    assert not any("autograd_checks.py" in p for p in problems), problems


def test_a_catalog_diagnosis_that_says_nothing_to_do_is_refused(tmp_path):
    catalog = dict(TWO_MISTAKES)
    catalog["sum-for-cotangent-x"] = Misconception("sum-for-cotangent-x", "t", "b", "A sum picks v = ones.")
    problems = advice_problems(_two_mistakes(tmp_path, "pass"), catalog, tmp_path)
    assert problems == [
        "the catalog's diagnosis of 'sum-for-cotangent-x' says nothing to do: add what the student should do, "
        "as an instruction"
    ]


def test_a_check_message_that_says_nothing_to_do_is_refused_with_its_notebook_cell_and_text(tmp_path):
    silent = 'expect(False, f"vjp(f, x, v) should have shape (2, 3), got {shape}", "bare-backward-x")'
    problems = advice_problems(_two_mistakes(tmp_path, silent), TWO_MISTAKES, tmp_path)
    assert problems == [
        "021_x/test_f: the message 'vjp(f, x, v) should have shape (2, 3), got …' says nothing to do: add what "
        "the student should do, as an instruction"
    ]
    instructing = 'expect(False, f"vjp should have shape (2, 3), got {shape}: return x.grad", "bare-backward-x")'
    assert advice_problems(_two_mistakes(tmp_path, instructing), TWO_MISTAKES, tmp_path) == []


def test_the_public_modules_own_messages_are_held_to_it_except_those_that_only_carry_another(tmp_path):
    (tmp_path / "autograd_checks.py").write_text(
        'def expect_tensor(value, what):\n    expect(ok, f"{what} should be a torch.Tensor")\n'
        'def expect_close(message, gap):\n    raise Diagnosis(f"{message} (largest difference {gap:.3g})")\n'
    )
    problems = advice_problems(_two_mistakes(tmp_path, "pass"), TWO_MISTAKES, tmp_path)
    assert problems == [
        "autograd_checks.py: the message '… should be a torch.Tensor' says nothing to do: add what the student "
        "should do, as an instruction"
    ]
