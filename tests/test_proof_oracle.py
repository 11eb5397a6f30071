"""The oracle: plain serial `nbgrader autograde` and the sealed engine agree on the proof's subjects.

The engine's side is the session's proof run itself; serial nbgrader (which
runs the test cells inside the student's kernel) grades a sample of the same
submissions again in a twin course: the reference, the blank stubs and the
first pack of controls, on two notebooks (the first, and the one that compiles
and times a loop). `python -m gradekit prove --against-nbgrader` compares them all.
"""

import pytest

from gradekit.proof.oracle import disagreements, serial_twin
from gradekit.proof.subjects import BLANK_ID, REFERENCE_ID

pytestmark = pytest.mark.nbgrader

SAMPLED_NOTEBOOKS = ("010_history", "075_compile")


def sampled_students(proof) -> tuple[str, ...]:
    """The reference, the blank stubs, and the first pack of controls (one control of each notebook)."""
    (first_pack, *_) = [s for s in proof.students if s.student_id not in (REFERENCE_ID, BLANK_ID)]
    assert set(SAMPLED_NOTEBOOKS) <= set(first_pack.notebooks)
    return (REFERENCE_ID, BLANK_ID, first_pack.student_id)


def test_the_sealed_engine_grades_proof_subjects_exactly_as_serial_nbgrader(proof, tmp_path):
    """Serial nbgrader grades six notebooks here, one kernel start at a time (about half a minute)."""
    students = sampled_students(proof)
    twin = serial_twin(proof.workspace, tmp_path / "serial", students, SAMPLED_NOTEBOOKS)
    assert disagreements(proof.workspace, twin, students, SAMPLED_NOTEBOOKS) == []
