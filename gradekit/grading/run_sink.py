"""Where the steps of one autograde hand back what the scratch grader reads: notebook reports, the grader's failures.

The scratch grader makes one sink per grader and gives it to nbgrader's Execute
step as a trait (`WarmExecute.sink`); it empties the sink before each run and
reads it after. nbgrader turns an exception inside its steps into
`success: False` and a log, and a test cell may catch an exception raised
under it; so a step that meets one of the grader's causes notices it here as
well, and the scratch grader raises it after the run, whatever became of the
exception on its way. The sink also carries the submission's phase clock
(phase_clock.py), which the steps enter where the work happens, and its idle
allowance (idle_allowance.py), which every cell's clock charges.
"""

from __future__ import annotations

import dataclasses

from gradekit.core.failures import GraderFailure
from gradekit.core.notes import Finding, Note
from gradekit.grading.grader_failures import THE_SUBMISSION_CAN_CAUSE
from gradekit.grading.idle_allowance import IdleAllowance
from gradekit.grading.phase_clock import PhaseClock


@dataclasses.dataclass(frozen=True)
class NotebookReport:
    """What happened while one notebook ran: tampering findings (grade withheld) and notes."""

    notebook: str
    findings: tuple[Finding, ...] = ()
    notes: tuple[Note, ...] = ()


class RunSink:
    """The reports and noticed failures of the autograde runs of one scratch grader, one run at a time."""

    def __init__(self) -> None:
        self.reports: list[NotebookReport] = []
        self.noticed: list[GraderFailure] = []
        self.clock = PhaseClock()  # restarted per submission by the scratch grader, not per run
        self.idle: IdleAllowance | None = None  # set afresh for each try of a submission by the scratch grader

    def __deepcopy__(self, memo: dict) -> RunSink:
        # traitlets copies each configured value into every step it builds: the sink is shared, not copied.
        return self

    def clear(self) -> None:
        self.reports.clear()
        self.noticed.clear()

    def report(self, report: NotebookReport) -> None:
        self.reports.append(report)

    def notice(self, failure: GraderFailure) -> GraderFailure:
        """Keep `failure` for the scratch grader and hand it back, to be raised where it was met."""
        self.noticed.append(failure)
        return failure

    def raise_noticed(self, last_attempt: bool) -> None:
        """Raise the first failure noticed since the last call; on the last try, leave the ambiguous ones to the findings."""
        failures = [f for f in self.noticed if not (last_attempt and f.cause in THE_SUBMISSION_CAN_CAUSE)]
        self.noticed.clear()
        if failures:
            raise failures[0]
