"""Every notebook of the course under the guarded grader: nothing honest is flagged, and edited tests are restored.

The reference and the blank stubs are the proof's own subjects, graded by the
same engine. nbgrader puts locked cells back from the source before it runs a
notebook; this proves it for each of our notebooks, with every test cell
rewritten to fail and its points changed.
"""

import nbformat
import pytest

from gradekit.authoring.release import new_workspace
from gradekit.core.status import Status
from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.gradebook import read_grades
from gradekit.grading.intake import stamp
from gradekit.proof.subjects import BLANK_ID, REFERENCE_ID, answer_sources, fill_answers

pytestmark = pytest.mark.nbgrader

EDITED = "edits-every-test"


@pytest.fixture(scope="module")
def graded(course, manifest, proof, tmp_path_factory):
    names = tuple(entry.name for entry in manifest.notebooks)
    scratch = new_workspace(course, tmp_path_factory.mktemp("guarded"), names)
    _write_edited_tests(scratch, manifest, names)
    result = grade_cohort(scratch, LocalExecutor(2), names)
    rows = {row.student_id: row for row in proof.rows if row.student_id in (REFERENCE_ID, BLANK_ID)}
    return scratch, manifest, rows | {row.student_id: row for row in result.rows}


def _write_edited_tests(course, manifest, names):
    folder = course.submitted_dir / EDITED / course.assignment_id
    folder.mkdir(parents=True)
    for name in names:
        notebook = fill_answers(course.release_dir / f"{name}.ipynb", answer_sources(manifest, name, None))
        for cell in notebook.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and cell.cell_type == "code":
                cell.source = "raise AssertionError('this test was edited by the student')"
                meta["points"] = meta["points"] * 10
        nbformat.write(notebook, folder / f"{name}.ipynb")
    stamp(folder)


def _max_score(manifest):
    return sum(manifest.points_of(entry.name) for entry in manifest.notebooks)


def test_the_reference_is_graded_in_full_and_nothing_is_flagged(graded):
    _, manifest, rows = graded
    reference = rows[REFERENCE_ID]
    assert reference.status is Status.GRADED, reference.message
    assert not reference.findings and not reference.notes
    assert reference.grades.score == reference.grades.max_score == _max_score(manifest)


def test_blank_stubs_score_zero_without_a_flag(graded):
    _, _, rows = graded
    assert rows[BLANK_ID].status is Status.GRADED and rows[BLANK_ID].score == 0


def test_edited_test_cells_and_points_are_restored_in_every_notebook(graded):
    scratch, manifest, rows = graded
    edited = rows[EDITED]
    assert edited.status is Status.GRADED, edited.message
    grades = read_grades(scratch, EDITED)
    assert grades.score == grades.max_score == _max_score(manifest)
