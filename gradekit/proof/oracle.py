"""The oracle: plain serial `nbgrader autograde` grades the proof's submissions again, and must agree.

Plain nbgrader runs every test cell inside the student's kernel, the way a
course that trusts its students grades; the engine runs them sealed, in the
grader. Both read the same source notebooks, so every gradebook record (scores,
flags, comments, cell by cell) must be equal. `python -m gradekit prove
--against-nbgrader` compares all the proof's submissions; the oracle test
compares a sample in CI.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gradekit.authoring.release import clone_workspace
from gradekit.core.course import Course
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.grading.gradebook import open_gradebook
from gradekit.grading.gradebook_records import read_record


def serial_twin(
    workspace: Course, root: Path, students: tuple[str, ...], notebooks: tuple[str, ...] | None = None
) -> Course:
    """A twin of the graded `workspace` holding `students` only (and `notebooks`, when given), graded by serial nbgrader."""
    twin = clone_workspace(workspace, root)
    for student in students:
        shutil.copytree(workspace.submitted_dir / student, twin.submitted_dir / student)
        for notebook in (twin.submitted_dir / student / twin.assignment_id).glob("*.ipynb"):
            if notebooks is not None and notebook.stem not in notebooks:
                notebook.unlink()
    with open_gradebook(twin) as gradebook:  # the copied gradebook must not hold the engine's grades
        for student in students:
            gradebook.remove_submission(twin.assignment_id, student)
    shutil.rmtree(twin.autograded_dir, ignore_errors=True)
    run_nbgrader(twin, "autograde", twin.assignment_id, "--force")
    return twin


def disagreements(engine: Course, twin: Course, students: tuple[str, ...], notebooks: tuple[str, ...]) -> list[str]:
    """Every notebook record on which the engine and serial nbgrader differ, in words."""
    found = []
    for student in students:
        ours = {n.name: n for n in read_record(engine, student).notebooks}
        theirs = {n.name: n for n in read_record(twin, student).notebooks}
        for name in notebooks:
            if name not in ours:
                continue
            if not theirs.get(name) or not theirs[name].grades:
                found.append(f"{student} {name}: serial nbgrader did not grade it")
            elif ours[name] != theirs[name]:
                differing = [
                    f"{a.cell}: {a.auto_score} vs {b.auto_score}"
                    for a, b in zip(ours[name].grades, theirs[name].grades)
                    if a != b
                ]
                found.append(
                    f"{student} {name}: sealed and plain differ ({'; '.join(differing) or 'flags or comments'})"
                )
    return found
