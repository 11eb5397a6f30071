"""The TA's progress lines count failed and flagged rows by their status."""

import io

import pytest

from gradekit.core.status import Status
from gradekit.grading.progress import Progress
from gradekit.grading.submission_grader import GradedSubmission

pytestmark = pytest.mark.unit


def test_progress_counts_each_status_and_names_it():
    stream = io.StringIO()
    progress = Progress(3, stream)
    for student, status in (("ada", Status.GRADED), ("ben", Status.FAILED), ("cy", Status.FLAGGED)):
        progress.update(
            GradedSubmission(student_id=student, status=status, message="", record=None, files=(), seconds=1.0)
        )
    assert (progress.done, progress.failed, progress.flagged) == (3, 1, 1)
    lines = stream.getvalue().splitlines()
    assert lines[1].startswith("[2/3] failed  ben (1.0 s)")
    assert "failed so far: 1  flagged: 1" in lines[2]


def test_no_estimate_until_every_worker_has_finished_one_then_the_completion_rate():
    stream = io.StringIO()
    progress = Progress(6, stream, workers=2)
    progress.update(
        GradedSubmission(student_id="ada", status=Status.GRADED, message="", record=None, files=(), seconds=60.0)
    )
    assert "estimating the time left" in stream.getvalue() and "s left" not in stream.getvalue()
    progress.update(
        GradedSubmission(student_id="ben", status=Status.GRADED, message="", record=None, files=(), seconds=50.0)
    )
    assert progress.seconds_left(elapsed=20.0) == 40.0  # 2 done in 20 s: 4 more take 40 s
    assert stream.getvalue().splitlines()[1].endswith("s left")


def test_grader_errors_are_counted_apart():
    stream = io.StringIO()
    progress = Progress(2, stream)
    progress.update(
        GradedSubmission(
            student_id="ada",
            status=Status.GRADER_ERROR,
            message="a grading kernel did not start",
            record=None,
            files=(),
            seconds=1.0,
        )
    )
    assert progress.grader_errors == 1 and "(grader errors: 1)" in stream.getvalue()
