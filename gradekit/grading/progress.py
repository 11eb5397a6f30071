"""Progress of a cohort run for the TA: done, failed, flagged, and an estimate of the time left.

Lines go to the stream the command gives (stderr by default): they are what a TA
watches during a run, shown whatever the log level.

The estimate waits until as many submissions are done as there are workers:
the first ones done are the largest (dealt first) and finish while every worker
is busy, so one early time per submission would overstate what is left many
times over. From then on it is the measured completion rate of the run.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from gradekit.grading.submission_grader import GradedSubmission


class Progress:
    def __init__(self, total: int, stream: TextIO = sys.stderr, workers: int = 1):
        self.total = total
        self.workers = max(1, workers)
        self.done = 0
        self.failed = 0
        self.flagged = 0
        self.grader_errors = 0
        self.started = time.monotonic()
        self.stream = stream

    def update(self, graded: GradedSubmission) -> None:
        self.done += 1
        self.failed += graded.status.failed
        self.flagged += graded.status.withheld
        self.grader_errors += graded.status.owner == "grader"
        self.stream.write(self.line(graded) + "\n")
        self.stream.flush()

    def seconds_left(self, elapsed: float) -> float | None:
        """The time left at the run's completion rate so far; None until every worker has had time to finish one."""
        if self.done < min(self.workers, self.total) or self.done == 0:
            return None
        return elapsed / self.done * (self.total - self.done)

    def line(self, graded: GradedSubmission) -> str:
        elapsed = time.monotonic() - self.started
        left = self.seconds_left(elapsed)
        width = len(str(self.total))
        estimate = "estimating the time left" if left is None else f"about {left:.0f} s left"
        grader = f" (grader errors: {self.grader_errors})" if self.grader_errors else ""
        return (
            f"[{self.done:>{width}}/{self.total}] {graded.status.label:<7} {graded.student_id} ({graded.seconds:.1f} s)"
            f"  failed so far: {self.failed}{grader}  flagged: {self.flagged}  elapsed {elapsed:.0f} s, {estimate}"
        )
