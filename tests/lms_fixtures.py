"""A small gradebook and rosters for the LMS export tests."""

from __future__ import annotations

from pathlib import Path

from nbgrader.api import Gradebook

ASSIGNMENT = "autograd"
# student -> (score of test_a out of 2, score of test_b out of 3); "dan" has no submission.
SCORES = {"ann": (2.0, 3.0), "bob": (1.0, 0.5), "eve": (0.0, 1.0)}
ENROLLED = ("ann", "bob", "eve", "dan")


def build_gradebook(db_url: str) -> None:
    with Gradebook(db_url) as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook("010_history", ASSIGNMENT)
        gradebook.add_grade_cell("test_a", "010_history", ASSIGNMENT, max_score=2, cell_type="code")
        gradebook.add_grade_cell("test_b", "010_history", ASSIGNMENT, max_score=3, cell_type="code")
        for student in ENROLLED:
            gradebook.add_student(student)
        for student, scores in SCORES.items():
            gradebook.add_submission(ASSIGNMENT, student)
            for cell, score in zip(("test_a", "test_b"), scores):
                grade = gradebook.find_grade(cell, "010_history", ASSIGNMENT, student)
                grade.auto_score = score
        gradebook.db.commit()


def write_canvas_roster(path: Path, students: tuple[str, ...]) -> Path:
    lines = ["student_id,Student,ID,SIS User ID,SIS Login ID,Section"]
    for number, student in enumerate(students, start=1):
        lines.append(f'{student},"{student.title()}, Test",{1000 + number},S{number},{student}@uni.example,Section A')
    path.write_text("\n".join(lines) + "\n")
    return path


def write_moodle_roster(path: Path, students: tuple[str, ...]) -> Path:
    lines = ["student_id,Email address"] + [f"{student},{student}@uni.example" for student in students]
    path.write_text("\n".join(lines) + "\n")
    return path
