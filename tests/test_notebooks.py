"""The notebook contract: source notebooks run top to bottom, are committed clean, and the release hides what it must."""

import nbformat
import pytest

from gradekit.authoring.cells import BEGIN_HIDDEN, BEGIN_SOLUTION, stub_solutions
from gradekit.core.cell_ids import cells_by_grade_id, grade_id
from gradekit.core.manifest import load_manifest
from gradekit.proof.subjects import REFERENCE_ID

NOTEBOOKS = [entry.name for entry in load_manifest().notebooks]


def _read(folder, name):
    return nbformat.read(folder / f"{name}.ipynb", as_version=4)


# The proof's reference submission is the source notebook run top to bottom by the grading
# engine (the release with the reference answers, hidden tests restored by nbgrader), so its
# graded copy shows whether every cell, demos included, ran cleanly.
@pytest.mark.nbgrader
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_source_notebook_runs_top_to_bottom_with_the_solutions(name, proof):
    graded = proof.workspace.autograded_dir / REFERENCE_ID / proof.workspace.assignment_id
    notebook = _read(graded, name)
    assert len(notebook.cells) == len(_read(proof.workspace.source_dir, name).cells)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.execution_count is not None, f"{grade_id(cell)} did not run"
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{grade_id(cell)}: {output.get('evalue')}"
            assert output.get("name") != "stderr", f"{grade_id(cell)} wrote to stderr: {output.get('text')}"


@pytest.mark.unit
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_source_notebook_is_committed_without_outputs(name, course):
    for cell in _read(course.source_dir, name).cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{grade_id(cell)} has outputs"


@pytest.mark.unit
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_has_stubs_and_visible_checks_only(name, course, manifest):
    source = cells_by_grade_id(_read(course.source_dir, name))
    release = cells_by_grade_id(_read(course.release_dir, name))
    assert source.keys() == release.keys()
    for cell_id, cell in release.items():
        assert BEGIN_SOLUTION not in cell.source and BEGIN_HIDDEN not in cell.source, cell_id
        assert "### END" not in cell.source, cell_id
    for exercise in manifest.exercises_of(name):
        # Exactly the source with each solution region replaced by the indented stub.
        expected = stub_solutions(source[exercise.answer_cell].source, course.code_stub)
        assert release[exercise.answer_cell].source == expected, exercise.answer_cell
        for test in exercise.tests:
            shown = source[test.cell].source.split(BEGIN_HIDDEN)[0].rstrip()
            assert release[test.cell].source.rstrip() == shown, test.cell
