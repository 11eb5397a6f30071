"""The grading proof on the real notebooks: reference full, blank zero, every control caught."""

import pytest

from gradekit.authoring.solutions import load_controls
from gradekit.proof.matrix import proof_matrix

pytestmark = pytest.mark.nbgrader


def test_the_proof_holds_for_every_notebook(proof, manifest):
    matrix = proof_matrix(manifest, proof.subjects, proof.grades)
    print(matrix)
    assert proof.ok, "\n".join(str(v) for v in proof.violations)


def test_every_control_was_graded_and_named_its_misconception(proof, manifest):
    controls = load_controls(manifest)
    assert {c.student_id for c in controls} <= set(proof.grades)
    for control in (c for c in controls if not c.is_alternative):
        grades = proof.grades[control.student_id]
        assert control.misconception in grades.diagnosed
        lost = {c.cell for c in grades.of_notebook(control.notebook) if not c.full}
        assert lost == set(control.fails)


def test_every_correct_alternative_kept_full_marks(proof, manifest):
    for alternative in (c for c in load_controls(manifest) if c.is_alternative):
        grades = proof.grades[alternative.student_id]
        assert all(c.full for c in grades.of_notebook(alternative.notebook)), alternative.name
        assert not grades.diagnosed


def test_the_reference_scores_every_point_of_the_manifest(proof, manifest):
    reference = proof.grades["reference"]
    total = sum(manifest.points_of(entry.name) for entry in manifest.notebooks)
    assert reference.score == reference.max_score == total
    assert proof.grades["blank"].score == 0 and proof.grades["blank"].max_score == total
