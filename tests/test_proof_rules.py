"""The proof's rules on synthetic grades: each violation kind is detected (no nbgrader needed)."""

import pytest

from gradekit.authoring.solutions import NegativeControl
from gradekit.core.grades import CellGrade, SubmissionGrades
from gradekit.core.manifest import Exercise, Manifest, NotebookEntry, TestCell
from gradekit.core.notes import Finding, FindingKind
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status
from gradekit.proof.packing import SyntheticStudent
from gradekit.proof.rules import check_subject, status_violations
from gradekit.proof.subjects import Subject

pytestmark = pytest.mark.unit

NOTEBOOK = "010_x"
MANIFEST = Manifest(
    assignment="a",
    notebooks=(NotebookEntry(NOTEBOOK, "1", "X", "r", "c"),),
    exercises=(
        Exercise(NOTEBOOK, "answer_f", ("f",), (TestCell("test_f", 2, ("m-one-x",)),)),
        Exercise(NOTEBOOK, "answer_g", ("g",), (TestCell("test_g", 3, ()),)),
    ),
)
CONTROL = NegativeControl("010-f__wrong", NOTEBOOK, "f", "m-one-x", ("test_f",), "def f(): pass")


def grades(f, g, named_f=()):
    return SubmissionGrades("s", (CellGrade(NOTEBOOK, "test_f", f, 2, named_f), CellGrade(NOTEBOOK, "test_g", g, 3)))


def test_reference_must_be_full_everywhere():
    reference = Subject("reference", (NOTEBOOK,))
    assert check_subject(MANIFEST, reference, grades(2, 3)) == []
    (violation,) = check_subject(MANIFEST, reference, grades(2, 1))
    assert violation.where == f"{NOTEBOOK}/test_g" and "full marks" in violation.reason


def test_blank_must_be_zero_and_graded():
    blank = Subject("blank", (NOTEBOOK,))
    assert check_subject(MANIFEST, blank, grades(0, 0)) == []
    assert len(check_subject(MANIFEST, blank, grades(0, 3))) == 1
    missing = SubmissionGrades("blank", (), missing=True)
    assert "no graded submission" in check_subject(MANIFEST, blank, missing)[0].reason


def test_control_must_lose_points_and_name_its_misconception_only_where_declared():
    subject = Subject(CONTROL.student_id, (NOTEBOOK,), CONTROL)
    assert check_subject(MANIFEST, subject, grades(0, 3, ("m-one-x",))) == []
    reasons = [v.reason for v in check_subject(MANIFEST, subject, grades(2, 3, ()))]
    assert any("got full marks" in r for r in reasons) and any("must name m-one-x" in r for r in reasons)
    (wrong_name,) = check_subject(MANIFEST, subject, grades(0, 3, ("other-thing-x",)))
    assert "named other-thing-x" in wrong_name.reason
    (collateral,) = check_subject(MANIFEST, subject, grades(0, 0, ("m-one-x",)))
    assert "outside its declared cells" in collateral.reason


def test_a_correct_alternative_must_keep_full_marks_on_every_cell():
    alternative = NegativeControl("010-f__another_way", NOTEBOOK, "f", "", (), "def f(): pass")
    subject = Subject(alternative.student_id, (NOTEBOOK,), alternative)
    assert subject.kind == "alternative" and alternative.student_id == "alternative-010-f__another_way"
    assert check_subject(MANIFEST, subject, grades(2, 3)) == []
    (violation,) = check_subject(MANIFEST, subject, grades(0, 3, ("m-one-x",)))
    assert violation.where == f"{NOTEBOOK}/test_f" and "correct alternative must earn full marks" in violation.reason


def test_points_must_match_the_manifest():
    wrong_points = SubmissionGrades("s", (CellGrade(NOTEBOOK, "test_f", 5, 5), CellGrade(NOTEBOOK, "test_g", 3, 3)))
    (violation,) = check_subject(MANIFEST, Subject("reference", (NOTEBOOK,)), wrong_points)
    assert "manifest says 2" in violation.reason


def packed_pair():
    first = Subject("control-a", ("010_x",), CONTROL)
    second = Subject("control-b", ("020_y",), CONTROL)
    return SyntheticStudent("controls-01", (first, second))


def row_of(status, findings=()):
    return Outcome(
        student_id="controls-01", status=status, message="why it was not graded", grades=None, findings=findings
    )


def test_a_graded_row_is_no_violation():
    row = row_of(Status.GRADED)
    assert status_violations(row, packed_pair()) == []


def test_a_failed_row_counts_against_every_subject_it_holds():
    row = row_of(Status.FAILED)
    violations = status_violations(row, packed_pair())
    assert [v.student_id for v in violations] == ["control-a", "control-b"]
    assert all("why it was not graded" in v.reason for v in violations)


def test_a_flagged_row_counts_against_the_subjects_whose_notebooks_it_names():
    named = row_of(
        Status.FLAGGED, (Finding(FindingKind.GUARD_SAW, "020_y", "torch.allclose was replaced", ("test_y",)),)
    )
    (violation,) = status_violations(named, packed_pair())
    assert violation.student_id == "control-b" and violation.reason.startswith("flagged: ")
    unnamed = row_of(Status.FLAGGED, (Finding(FindingKind.GUARD_NEVER_ARMED, ""),))
    assert len(status_violations(unnamed, packed_pair())) == 2


def test_a_violation_shows_what_the_failing_cell_said():
    reference = Subject("reference", (NOTEBOOK,))
    said = "Diagnosis: build the graph with in_kernel"
    failed = SubmissionGrades("s", (CellGrade(NOTEBOOK, "test_f", 2, 2), CellGrade(NOTEBOOK, "test_g", 0, 3, (), said)))
    (violation,) = check_subject(MANIFEST, reference, failed)
    assert violation.said == said
    assert str(violation).splitlines()[1].strip() == f"the cell said: {said}"
