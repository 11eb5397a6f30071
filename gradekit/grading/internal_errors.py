"""The grader's own failures: each one's full traceback goes to a log file, and its row points there.

Workers only format the traceback and send it back with the row; the coordinator
alone writes the log, so a run on a cluster keeps its tracebacks too.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import traceback
from pathlib import Path

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading.submission_grader import GradedSubmission, grader_error

LOG_NAME = "internal-errors.log"


def crashed(student_id: str, error: BaseException, worker: str = "", attempts: int = 1) -> GradedSubmission:
    """The grader-error row of a submission our own code could not grade, carrying the formatted traceback."""
    if not isinstance(error, GraderFailure):
        error = _as_failure(error)
    return grader_error(student_id, error, attempts, 0.0, worker, "".join(traceback.format_exception(error)))


def _as_failure(error: BaseException) -> GraderFailure:
    failure = GraderFailure(GraderCause.INTERNAL_ERROR, f"{type(error).__name__}: {error}")
    failure.__cause__ = error  # the traceback in the log shows where it happened
    return failure


def record_internal_errors(outcomes: dict[str, GradedSubmission], log: Path) -> dict[str, GradedSubmission]:
    """Write every outcome's traceback to `log` (removing a stale log when there is none); rows then say where it is."""
    broken = {student: graded for student, graded in sorted(outcomes.items()) if graded.internal_error}
    if not broken:
        Path(log).unlink(missing_ok=True)
        return outcomes
    _write_atomically(Path(log), "\n".join(_block(graded) for graded in broken.values()))
    pointed = {
        student: dataclasses.replace(graded, message=f"{graded.message} (full traceback: {log})")
        for student, graded in broken.items()
    }
    return {**outcomes, **pointed}


def _block(graded: GradedSubmission) -> str:
    where = f" on worker {graded.worker}" if graded.worker else ""
    header = f"==== {graded.student_id}: internal error while grading{where} ===="
    return f"{header}\n{graded.internal_error.rstrip()}\n"


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w") as stream:
        stream.write(text)
    os.replace(temporary, path)
