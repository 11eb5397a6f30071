"""The metadata check with its schema checked once judges every cell as nbgrader's own check does."""

import copy

import nbformat
import pytest
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.preprocessors import CheckCellMetadata

from gradekit.core.course import load_course
from gradekit.grading.metadata_check import QuickCheckCellMetadata, _QuickMetadataValidator

pytestmark = pytest.mark.unit


def _graded_cell() -> nbformat.NotebookNode:
    notebook = nbformat.read(sorted(load_course().release_dir.glob("*.ipynb"))[0], as_version=4)
    return next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade"))


def _broken(change) -> nbformat.NotebookNode:
    cell = copy.deepcopy(_graded_cell())
    change(cell.metadata["nbgrader"])
    return cell


VARIANTS = {
    "as released": lambda meta: None,
    "points not a number": lambda meta: meta.__setitem__("points", "ten"),
    "grade not a boolean": lambda meta: meta.__setitem__("grade", "yes"),
    "grade id missing": lambda meta: meta.pop("grade_id"),
    "an older schema": lambda meta: meta.__setitem__("schema_version", 2),
    "a newer schema": lambda meta: meta.__setitem__("schema_version", 9),
    "solution missing": lambda meta: meta.pop("solution"),
}


def _verdict(validator, cell) -> str:
    try:
        validator.validate_cell(cell)
    except Exception as error:  # the type and message are what is compared
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"
    return "valid"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_cell_gets_the_verdict_nbgraders_check_gives(variant):
    cell = _broken(VARIANTS[variant])
    assert _verdict(_QuickMetadataValidator(), cell) == _verdict(MetadataValidator(), cell)


def test_the_step_fails_a_notebook_with_broken_metadata_as_nbgraders_step_does():
    notebook = nbformat.v4.new_notebook(cells=[_broken(VARIANTS["points not a number"])])
    for step in (CheckCellMetadata(), QuickCheckCellMetadata()):
        with pytest.raises(ValidationError, match="the nbgrader metadata may be corrupted"):
            step.preprocess(copy.deepcopy(notebook), {})
    released = nbformat.v4.new_notebook(cells=[_graded_cell()])
    assert QuickCheckCellMetadata().preprocess(released, {})[0] is released
