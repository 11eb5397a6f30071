"""A pre-check's tries: a check whose grading process or cluster worker was lost is sent again, up to the kit's attempts.

Whichever engine grades it (the service's own processes or a Dask cluster),
losing the worker is the grader's failure: the check is tried again after the
kit's backoff, and one lost on every try ends as the grader's failure, which
the desk gives back to the student. A cluster moves a lost worker's task to
another worker by itself; those moves count as tries too, so that the row's
`attempts` says how often the check was really started.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading.grader_failures import backoff_seconds
from gradekit.grading.submission_grader import GradedSubmission, grader_error


@dataclasses.dataclass(frozen=True)
class Try:
    """What one sending of a check gave back: its row, or None when the worker grading it was lost."""

    graded: GradedSubmission | None
    starts: int = 1  # times a worker started on it (a cluster restarts a lost worker's task by itself)


async def graded_within_attempts(
    send: Callable[[], Awaitable[Try]], student: str, attempts: int, first_wait: float
) -> GradedSubmission:
    """Send the check until a try gives back a row or `attempts` starts were lost; the row counts every start."""
    started = 0
    while True:
        sent = await send()
        started += sent.starts
        if sent.graded is not None:
            return dataclasses.replace(sent.graded, attempts=sent.graded.attempts + started - 1)
        if started >= attempts:
            lost = GraderFailure(GraderCause.WORKER_LOST, "the worker grading this notebook was lost on every try")
            return grader_error(student, lost, started)
        await asyncio.sleep(backoff_seconds(started + 1, first_wait))
