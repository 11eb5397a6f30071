"""The notebook contract: source notebooks run top to bottom, are committed clean, and the release hides what it must."""
import re
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from gradekit.authoring.cells import BEGIN_HIDDEN, BEGIN_SOLUTION, END_SOLUTION, cells_by_grade_id, grade_id
from gradekit.manifest import load_manifest
from gradekit.nbgrader_cli import grading_environment

NOTEBOOKS = [entry.name for entry in load_manifest().notebooks]
SOLUTION_REGION = re.compile(
    rf"^(?P<indent>[ \t]*){re.escape(BEGIN_SOLUTION)}\n.*?^[ \t]*{re.escape(END_SOLUTION)}[ \t]*$", re.MULTILINE | re.DOTALL
)


def _read(folder, name):
    return nbformat.read(folder / f"{name}.ipynb", as_version=4)


# One kernel per notebook: the notebook tier; the other two read files only.
@pytest.mark.notebook
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_source_notebook_runs_top_to_bottom_with_the_solutions(name, course, tmp_path, monkeypatch):
    for key, value in grading_environment().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    folder = tmp_path / "run"
    shutil.copytree(course.source_dir, folder)
    notebook = _read(folder, name)
    NotebookClient(notebook, timeout=course.cell_timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    for cell in notebook.cells:
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
        expected = SOLUTION_REGION.sub(
            lambda region: "\n".join(region["indent"] + line for line in course.code_stub.splitlines()),
            source[exercise.answer_cell].source,
        )
        assert release[exercise.answer_cell].source == expected, exercise.answer_cell
        for test in exercise.tests:
            shown = source[test.cell].source.split(BEGIN_HIDDEN)[0].rstrip()
            assert release[test.cell].source.rstrip() == shown, test.cell
