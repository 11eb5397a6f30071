"""Progress of a cohort run for the TA: done, failed, flagged, and an estimate of the time left.

Lines go to the stream the command gives (stderr by default): they are what a TA
watches during a run, shown whatever the log level.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from gradekit.grading.submission_grader import GradedSubmission


class Progress:
    def __init__(self, total: int, stream: TextIO = sys.stderr):
        self.total = total
        self.done = 0
        self.failed = 0
        self.flagged = 0
        self.started = time.monotonic()
        self.stream = stream

    def update(self, graded: GradedSubmission) -> None:
        self.done += 1
        self.failed += graded.status.failed
        self.flagged += graded.status.withheld
        self.stream.write(self.line(graded) + "\n")
        self.stream.flush()

    def line(self, graded: GradedSubmission) -> str:
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        width = len(str(self.total))
        return (
            f"[{self.done:>{width}}/{self.total}] {graded.status.label:<7} {graded.student_id} ({graded.seconds:.1f} s)"
            f"  failed so far: {self.failed}  flagged: {self.flagged}  elapsed {elapsed:.0f} s, about {left:.0f} s left"
        )
