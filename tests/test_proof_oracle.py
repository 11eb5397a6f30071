"""The oracle: plain serial `nbgrader autograde` and the grading engine agree on the proof's subjects."""
import io

import pytest

from gradekit.authoring.release import new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.gradebook import read_grades
from gradekit.grading.gradebook_records import read_record
from gradekit.grading.progress import Progress
from gradekit.nbgrader_cli import run_nbgrader
from gradekit.proof.packing import pack_subjects
from gradekit.proof.subjects import proof_subjects, write_student

from cohort_fixtures import twin_course

pytestmark = pytest.mark.nbgrader

# One control from each: the first notebook, the one that compiles, the last.
SAMPLED_NOTEBOOKS = ("010_history", "075_compile", "090_decisions")


def sampled_subjects(manifest):
    """The reference, the blank stubs, and the first listed control of each sampled notebook."""
    subjects = proof_subjects(manifest, load_controls(manifest))
    firsts = {}
    for subject in subjects:
        if subject.control is not None:
            firsts.setdefault(subject.control.notebook, subject)
    return tuple(s for s in subjects if s.control is None) + tuple(firsts[name] for name in SAMPLED_NOTEBOOKS)


@pytest.fixture(scope="module")
def both_gradings(course, manifest, tmp_path_factory):
    notebooks = tuple(entry.name for entry in manifest.notebooks)
    engine = new_workspace(course, tmp_path_factory.mktemp("engine"), notebooks)
    students = pack_subjects(sampled_subjects(manifest))
    for student in students:
        write_student(engine, engine.release_dir, manifest, student.student_id, student.subjects)
    serial = twin_course(engine, tmp_path_factory.mktemp("serial"), skip=set())
    result = grade_cohort(engine, LocalExecutor(2), notebooks, Progress(len(students), io.StringIO()))
    run_nbgrader(serial, "autograde", serial.assignment_id, "--force")
    return engine, serial, students, result


def test_the_engine_grades_proof_subjects_exactly_as_serial_nbgrader(both_gradings):
    """Slow: about two minutes on two cores (serial nbgrader grades 25 notebooks one kernel start at a time)."""
    engine, serial, students, result = both_gradings
    assert len(students) == 3 and len(result.rows) == 3  # reference, blank, one student carrying three controls
    assert not result.failed and not result.flagged, [row.message for row in result.rows]
    for student in students:
        ours, theirs = read_record(engine, student.student_id), read_record(serial, student.student_id)
        assert [n.name for n in ours.notebooks] == [n.name for n in theirs.notebooks]
        for mine, oracle in zip(ours.notebooks, theirs.notebooks):  # cell by cell: scores, flags, comments
            assert mine == oracle, f"{student.student_id} {mine.name}"
        assert ours == theirs
        assert read_grades(engine, student.student_id) == read_grades(serial, student.student_id)
