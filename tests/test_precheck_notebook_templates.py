"""A notebook's own template: its gradebook knows that notebook alone, and grades it exactly as the whole template does."""

import filecmp
import os

import nbformat
import pytest
from nbgrader.api import Gradebook

from gradekit.authoring.release import new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.grading_run import RUN_FILE, GradingRun
from gradekit.grading.scratch_gradebook import stop_sharing
from gradekit.grading.submission_grader import ScratchGrader, grader_error
from gradekit.precheck.engine import SealedEngine
from gradekit.precheck.notebook_templates import notebook_templates
from gradekit.proof.subjects import answer_sources, fill_answers
from gradekit.sandbox.kernel_guard import PROTECTED_VARIABLE

pytestmark = pytest.mark.nbgrader

NOTEBOOKS = ("010_history", "020_leaves")


@pytest.fixture(scope="module")
def templates(course, tmp_path_factory):
    whole = new_workspace(course, tmp_path_factory.mktemp("whole") / "course", NOTEBOOKS)
    GradingRun.of(course).write(whole.root)
    return whole, notebook_templates(whole, tmp_path_factory.mktemp("notebooks"))


def _grade_cells(db_url, course_id, assignment_id):
    with Gradebook(db_url, course_id) as gradebook:
        return {
            notebook.name: sorted((cell.name, cell.max_score) for cell in notebook.grade_cells)
            for notebook in gradebook.find_assignment(assignment_id).notebooks
        }


def test_each_notebooks_gradebook_knows_it_alone_with_its_cells_and_the_whole_source(templates):
    whole, own = templates
    cells = _grade_cells(whole.db_url, whole.course_id, whole.assignment_id)
    assert sorted(own) == sorted(NOTEBOOKS) == sorted(cells)
    for name, root in own.items():
        theirs = whole.at(root)
        assert _grade_cells(theirs.db_url, theirs.course_id, theirs.assignment_id) == {name: cells[name]}
        compared = filecmp.dircmp(whole.source_dir, theirs.source_dir)
        assert not (compared.left_only or compared.right_only or compared.diff_files)
        assert (root / RUN_FILE).read_text() == (whole.root / RUN_FILE).read_text()


def test_a_notebook_graded_on_its_own_template_gets_the_grades_the_whole_template_gives(
    templates, course, manifest, tmp_path
):
    whole, own = templates
    control = next(c for c in load_controls(manifest) if c.name == "010-float64_leaf__default_dtype")
    folder = tmp_path / "upload" / course.assignment_id
    folder.mkdir(parents=True)
    filled = fill_answers(course.release_dir / "010_history.ipynb", answer_sources(manifest, "010_history", control))
    nbformat.write(filled, folder / "010_history.ipynb")
    # The engine's own pool, which keeps its workers' files under the run's folder and removes them.
    graded = [next(LocalExecutor(1).grade_all(root, [(folder, "ana")])) for root in (whole.root, own["010_history"])]
    notebooks = [{n.name: n for n in outcome.record.notebooks} for outcome in graded]
    assert sorted(notebooks[0]) == sorted(NOTEBOOKS) and sorted(notebooks[1]) == ["010_history"]
    scores = [sorted((g.cell, g.auto_score) for g in n["010_history"].grades) for n in notebooks]
    assert scores[0] == scores[1]
    assert 0 < sum(score for _, score in scores[0]) < sum(max_score for _, max_score in _max(whole))


def _max(whole):
    return _grade_cells(whole.db_url, whole.course_id, whole.assignment_id)["010_history"]


def test_each_grading_hands_its_kernels_its_own_templates_folders_whatever_the_process_built_since(
    templates, tmp_path, monkeypatch
):
    _, own = templates
    monkeypatch.setenv(PROTECTED_VARIABLE, "")  # restored after the test
    graders = {name: ScratchGrader(root, tmp_path / name / "course") for name, root in own.items()}
    protected = {}

    def noted(name):
        def grade_once(*_):
            protected[name] = os.environ[PROTECTED_VARIABLE].split(os.pathsep)
            return grader_error("ana", GraderFailure(GraderCause.INTERNAL_ERROR, "not graded here"), 1)

        return grade_once

    try:
        for name, grader in graders.items():  # every grader is built before the first grades
            monkeypatch.setattr(grader, "_grade_once", noted(name))
            grader.grade(tmp_path, "ana")
    finally:
        for grader in graders.values():
            grader.unsynced.remove()
            stop_sharing(grader.course.db_url)
    for name, root in own.items():
        others = {str(other.resolve()) for other_name, other in own.items() if other_name != name}
        assert str(root.resolve()) in protected[name] and str(graders[name].course.root) in protected[name]
        assert not others & set(protected[name])


def test_the_pre_checks_templates_are_among_the_folders_its_kernels_may_not_read(course, tmp_path):
    engine = SealedEngine(course, tmp_path / "state", workers=1)
    try:
        for root in engine.notebook_templates.values():
            closed = GradingRun.read(root).protected_roots
            assert str(engine.template.root.resolve()) in closed and str(root.parent.resolve()) in closed
    finally:
        engine.close()
