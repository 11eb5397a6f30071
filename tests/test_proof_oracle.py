"""The oracle: plain serial `nbgrader autograde` and the grading engine agree on the proof's subjects.

The engine's side is the session's proof run itself (graded by `gradekit
prove`'s engine); serial nbgrader grades a sample of the same submissions again
in a twin course: the reference, the blank stubs and the first pack of
controls, on two notebooks (the first, and the one that compiles and times a loop).
`python -m gradekit prove` compares nothing with nbgrader; this test is where
the engine is held to it.
"""
import shutil

import pytest

from gradekit.grading.gradebook import open_gradebook
from gradekit.grading.gradebook_records import read_record
from gradekit.nbgrader_cli import run_nbgrader
from gradekit.proof.subjects import BLANK_ID, REFERENCE_ID

from cohort_fixtures import twin_course

pytestmark = pytest.mark.nbgrader

SAMPLED_NOTEBOOKS = ("010_history", "075_compile")


def sampled_students(proof) -> tuple[str, ...]:
    """The reference, the blank stubs, and the first pack of controls (one control of each notebook)."""
    (first_pack, *_) = [s for s in proof.students if s.student_id not in (REFERENCE_ID, BLANK_ID)]
    assert set(SAMPLED_NOTEBOOKS) <= set(first_pack.notebooks)
    return (REFERENCE_ID, BLANK_ID, first_pack.student_id)


@pytest.fixture(scope="module")
def serial(proof, tmp_path_factory):
    """A twin of the proof's course holding the sample only, graded by plain serial nbgrader."""
    students = sampled_students(proof)
    skip = {folder.name for folder in proof.workspace.submitted_dir.iterdir()} - set(students)
    twin = twin_course(proof.workspace, tmp_path_factory.mktemp("serial"), skip)
    for student in students:
        for notebook in (twin.submitted_dir / student / twin.assignment_id).glob("*.ipynb"):
            if notebook.stem not in SAMPLED_NOTEBOOKS:
                notebook.unlink()
    with open_gradebook(twin) as gradebook:  # the copied gradebook must not hold the engine's grades of the sample
        for student in students:
            gradebook.remove_submission(twin.assignment_id, student)
    shutil.rmtree(twin.autograded_dir, ignore_errors=True)
    run_nbgrader(twin, "autograde", twin.assignment_id, "--force")
    return twin, students


def test_the_engine_grades_proof_subjects_exactly_as_serial_nbgrader(proof, serial):
    """Serial nbgrader grades six notebooks here, one kernel start at a time (about half a minute)."""
    twin, students = serial
    for student in students:
        ours = {n.name: n for n in read_record(proof.workspace, student).notebooks}
        theirs = {n.name: n for n in read_record(twin, student).notebooks}
        for name in SAMPLED_NOTEBOOKS:  # cell by cell: scores, flags, comments
            assert theirs[name].grades, f"serial nbgrader did not grade {student} {name}"
            assert ours[name] == theirs[name], f"{student} {name}"
