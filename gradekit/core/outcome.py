"""One submission's row in a cohort run: what every stage above the engine reads."""

from __future__ import annotations

import dataclasses

from gradekit.core.failures import GraderCause
from gradekit.core.grades import SubmissionGrades
from gradekit.core.grading_stamp import GradingStamp
from gradekit.core.notes import Finding, Note
from gradekit.core.status import Status


@dataclasses.dataclass(frozen=True, kw_only=True)  # built by name: several fields are text
class CohortRow:
    student_id: str
    status: Status
    message: str
    grades: SubmissionGrades | None
    worker: str = ""
    notes: tuple[Note, ...] = ()
    findings: tuple[Finding, ...] = ()
    cause: GraderCause | None = None  # set on a grader error: what went wrong on the grader's side
    attempts: int = 1  # tries its grading took; more than one when the grader's own failures were retried
    graded_by: GradingStamp | None = None  # the checks, kit and time of the run that graded it; None: no record

    @property
    def score(self) -> float:
        return self.grades.score if self.grades else 0.0
