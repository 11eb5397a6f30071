"""Proof subjects packed into synthetic students: fewer submissions, the same notebooks graded.

Every submission costs a fixed overhead besides its notebooks (a fresh scratch
course, intake, nbgrader's bookkeeping, a gradebook record), so controls share
students: one synthetic student carries at most one control per notebook. Each
notebook still runs in a kernel of its own and the rules are checked per
notebook, so every control keeps a verdict of its own.
"""

from __future__ import annotations

import dataclasses

from gradekit.core.grades import SubmissionGrades
from gradekit.proof.subjects import Subject

PACK_PREFIX = "controls-"


@dataclasses.dataclass(frozen=True)
class SyntheticStudent:
    """One submission of the proof cohort and the subjects whose notebooks it holds."""

    student_id: str
    subjects: tuple[Subject, ...]

    @property
    def notebooks(self) -> tuple[str, ...]:
        return tuple(name for subject in self.subjects for name in subject.notebooks)


def pack_subjects(subjects: tuple[Subject, ...]) -> tuple[SyntheticStudent, ...]:
    """The reference and the blank stubs alone; each control joins the first pack that lacks its notebook."""
    alone = [SyntheticStudent(s.student_id, (s,)) for s in subjects if s.control is None]
    packs: list[list[Subject]] = []
    for subject in (s for s in subjects if s.control is not None):
        free = next((pack for pack in packs if not _shares_a_notebook(pack, subject)), None)
        if free is None:
            packs.append([subject])
        else:
            free.append(subject)
    numbered = [SyntheticStudent(f"{PACK_PREFIX}{index:02d}", tuple(pack)) for index, pack in enumerate(packs, 1)]
    return tuple(alone + numbered)


def subject_grades(grades: SubmissionGrades, subject: Subject) -> SubmissionGrades:
    """The grades of the subject's own notebooks, under the subject's id."""
    cells = tuple(cell for cell in grades.cells if cell.notebook in subject.notebooks)
    return SubmissionGrades(subject.student_id, cells, grades.missing)


def _shares_a_notebook(pack: list[Subject], subject: Subject) -> bool:
    return any(set(member.notebooks) & set(subject.notebooks) for member in pack)
