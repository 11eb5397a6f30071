"""A grading kernel cannot reach the reference solutions, even when it tries."""
import io

import pytest

from gradekit.course import REPO_ROOT
from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.progress import Progress
from gradekit.proof.subjects import answer_sources, fill_answers
from gradekit.authoring.release import new_workspace

import nbformat

pytestmark = pytest.mark.nbgrader

CHEATS = {
    "cheat-plain-import": "from solutions.reference.history import float64_leaf",
    "cheat-path-edit": f"import sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\nfrom solutions.reference.history import float64_leaf",
}


def test_answers_that_import_the_reference_earn_nothing(course, manifest, tmp_path):
    # Only the two cheats are graded, in a scratch course holding 010_history alone.
    workspace = new_workspace(course, tmp_path / "cheats", ("010_history",))
    for student, cheat in CHEATS.items():
        sources = answer_sources(manifest, "010_history", None)
        sources["answer_float64_leaf"] = cheat
        notebook = fill_answers(workspace.release_dir / "010_history.ipynb", sources)
        folder = workspace.submitted_dir / student / workspace.assignment_id
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / "010_history.ipynb")
    result = grade_cohort(workspace, LocalExecutor(2), ("010_history",), Progress(len(CHEATS), io.StringIO()))
    assert [row.student_id for row in result.rows] == sorted(CHEATS) and not result.failed
    for row in result.rows:
        student, grades = row.student_id, row.grades
        assert grades.cell("010_history", "test_float64_leaf").score == 0, student
        # The rest of the notebook is the reference and still earns its points.
        assert grades.cell("010_history", "test_square_sum_grad").full, student
