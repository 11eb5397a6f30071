"""One submission's outcome: the one type the cohort, the pre-check, the class report, the proof and the regrade read.

A grading worker makes it (grading/submission_grader.py), the coordinator
stores its grades and keeps it as the submission's row in the cohort
(grading/cohort.py), and every stage above reads that row: the class report,
the proof's rules, the regrade's diff, the record of a run's words
(row_record.py). The pre-check reads the same fields from the worker's outcome
to word the student's reply. The LMS export reads none of it: it reads
nbgrader's gradebook, where a withheld grade already waits for a TA.

It is built by name only (`kw_only`, frozen): several fields are text, and a
message put where the worker's name goes would still type-check by position.

What only the trip from a worker to the coordinator needs (the gradebook
record to store, the graded files, the seconds it took, the traceback of our
own failure) is not here: `GradedSubmission` (grading/submission_grader.py)
is this outcome with those fields added, in the layer that makes and stores
them, and `as_outcome` leaves them behind once they are stored. What only the
coordinator knows (the grades the gradebook holds once stored, the run that
graded it) is here, and stays None until the coordinator sets it.
"""

from __future__ import annotations

import dataclasses

from gradekit.core.failures import GraderCause
from gradekit.core.grades import SubmissionGrades
from gradekit.core.grading_stamp import GradingStamp
from gradekit.core.notes import Finding, Note
from gradekit.core.status import Status


@dataclasses.dataclass(frozen=True, kw_only=True)
class Outcome:
    """How one submission's grading ended; a failure is a status here, never an exception.

    status: GRADED; FLAGGED (graded, but the grade is withheld for a TA:
    `findings` says why); FAILED (nothing graded: `message` says why); or
    GRADER_ERROR (the grader's own failure, still there after its retries:
    `cause` says which, nothing is scored). `notes` lists what was set aside
    or repaired on the way.
    """

    student_id: str
    status: Status
    message: str
    worker: str = ""  # host:pid of the process that graded it
    notes: tuple[Note, ...] = ()
    findings: tuple[Finding, ...] = ()
    cause: GraderCause | None = None  # set on a grader error: what went wrong on the grader's side
    attempts: int = 1  # tries its grading took; more than one when the grader's own failures were retried
    grades: SubmissionGrades | None = None  # what the course's gradebook holds once stored; None: nothing stored
    graded_by: GradingStamp | None = None  # the checks, kit and time of the run that graded it; None: no record

    @property
    def score(self) -> float:
        return self.grades.score if self.grades else 0.0

    def as_outcome(self) -> Outcome:
        """This outcome as the plain type: what a subtype adds is left behind."""
        return Outcome(**{field.name: getattr(self, field.name) for field in dataclasses.fields(Outcome)})
