"""Packing proof subjects into synthetic students: one control per notebook, verdicts kept apart."""

import pytest

from gradekit.authoring.solutions import NegativeControl
from gradekit.core.grades import CellGrade, SubmissionGrades
from gradekit.proof.packing import pack_subjects, subject_grades
from gradekit.proof.subjects import Subject

pytestmark = pytest.mark.unit


def control(notebook, name):
    return NegativeControl(f"{notebook}-f__{name}", notebook, "f", "some-thing-wrong", ("test_f",), "def f(): pass")


def subject_of(c):
    return Subject(c.student_id, (c.notebook,), c)


def test_each_student_carries_at_most_one_control_per_notebook():
    controls = [control("010_a", "one"), control("010_a", "two"), control("020_b", "one"), control("010_a", "three")]
    reference = Subject("reference", ("010_a", "020_b"))
    students = pack_subjects((reference, *map(subject_of, controls)))
    assert [s.student_id for s in students] == ["reference", "controls-01", "controls-02", "controls-03"]
    assert [[sub.control.name for sub in s.subjects] for s in students[1:]] == [
        ["010_a-f__one", "020_b-f__one"],
        ["010_a-f__two"],
        ["010_a-f__three"],
    ]
    for student in students:
        assert len(student.notebooks) == len(set(student.notebooks))


def test_a_subject_sees_only_the_grades_of_its_own_notebooks():
    both = SubmissionGrades("controls-01", (CellGrade("010_a", "test_f", 0, 2), CellGrade("020_b", "test_f", 2, 2)))
    mine = subject_grades(both, subject_of(control("020_b", "one")))
    assert mine.student_id == "control-020_b-f__one"
    assert mine.cells == (CellGrade("020_b", "test_f", 2, 2),)
