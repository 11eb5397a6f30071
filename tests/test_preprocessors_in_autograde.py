"""The course's autograde pipeline under real `nbgrader autograde`: what is left for a TA afterwards."""

import nbformat
import pytest

from gradekit.authoring.release import new_workspace
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.grading.gradebook import open_gradebook
from gradekit.proof.subjects import REFERENCE_ID, answer_sources, fill_answers, written_answer_sources

pytestmark = pytest.mark.nbgrader

NOTEBOOK = "090_decisions"


def reference_with_written_answers(workspace, manifest):
    """The release notebook filled with the reference code and the model written answers of the source."""
    written = written_answer_sources(manifest, NOTEBOOK, workspace.source_dir / f"{NOTEBOOK}.ipynb")
    return fill_answers(workspace.release_dir / f"{NOTEBOOK}.ipynb", answer_sources(manifest, NOTEBOOK, None) | written)


def test_only_the_free_response_answers_wait_for_a_manual_grade(course, manifest, tmp_path):
    answers = [answer for answer in manifest.manual if answer.notebook == NOTEBOOK]
    assert answers, f"{NOTEBOOK} has no free-response answer to grade"
    workspace = new_workspace(course, tmp_path / "course", (NOTEBOOK,))
    folder = workspace.submitted_dir / REFERENCE_ID / workspace.assignment_id
    folder.mkdir(parents=True)
    nbformat.write(reference_with_written_answers(workspace, manifest), folder / f"{NOTEBOOK}.ipynb")

    run_nbgrader(workspace, "autograde", workspace.assignment_id, "--force")

    with open_gradebook(workspace) as gradebook:
        grades = {
            grade.name: grade
            for grade in gradebook.find_submission_notebook(NOTEBOOK, workspace.assignment_id, REFERENCE_ID).grades
        }
        waiting = {name for name, grade in grades.items() if grade.needs_manual_grade}
        assert waiting == {answer.answer_cell for answer in answers}
        for answer in answers:  # the mark scheme: graded, 0 of 0, nothing for the TA to type
            scheme = grades[answer.task_cell]
            assert (scheme.score, scheme.max_score, scheme.needs_manual_grade) == (0, 0, False)
        assert gradebook.find_submission(workspace.assignment_id, REFERENCE_ID).needs_manual_grade
