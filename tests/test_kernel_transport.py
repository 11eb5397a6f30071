"""Kernels of plain nbgrader runs talk to it encrypted, so ipykernel has nothing to warn about.

nbgrader_config.py asks the kernel manager for CurveZMQ keys; this runs one real
`nbgrader autograde` of one notebook, as the oracle and the benchmark do.
"""

import pytest

from gradekit.authoring.release import new_workspace
from gradekit.core.manifest import load_manifest
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.grading.gradebook import open_gradebook
from gradekit.proof.subjects import REFERENCE_ID, Subject, write_submission

pytestmark = pytest.mark.nbgrader

NOTEBOOK = "010_history"
# The start of what ipykernel logs when its sockets are plain TCP.
PLAIN_TCP_WARNING = "running over TCP without encryption"


def test_plain_autograde_starts_its_kernel_without_the_plain_tcp_warning(course, tmp_path):
    scratch = new_workspace(course, tmp_path / "course", (NOTEBOOK,))
    manifest = load_manifest().only([NOTEBOOK])
    write_submission(scratch, scratch.release_dir, manifest, Subject(REFERENCE_ID, (NOTEBOOK,)))
    result = run_nbgrader(scratch, "autograde", scratch.assignment_id, "--force")
    printed = result.stdout + result.stderr
    assert PLAIN_TCP_WARNING.lower() not in printed.lower(), printed
    with open_gradebook(scratch) as gradebook:  # the kernel ran the notebook and graded it in full
        submission = gradebook.find_submission(scratch.assignment_id, REFERENCE_ID)
        assert submission.score == submission.max_score == manifest.points_of(NOTEBOOK)
