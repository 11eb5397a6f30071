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
        progress.update(GradedSubmission(student, status, "", None, (), 1.0))
    assert (progress.done, progress.failed, progress.flagged) == (3, 1, 1)
    lines = stream.getvalue().splitlines()
    assert lines[1].startswith("[2/3] failed  ben (1.0 s)")
    assert "failed so far: 1  flagged: 1" in lines[2]
