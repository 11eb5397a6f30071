"""The worker's box: present here (CI installs it), and never left out without the TA saying so."""

import dataclasses
import io
import subprocess
import sys

import pytest
from submission_cases import HONEST, NOTEBOOKS, Builder

from gradekit.authoring.release import new_workspace
from gradekit.core.course import REPO_ROOT
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.notes import NoteKind
from gradekit.core.status import Status
from gradekit.grading import worker_box
from gradekit.grading.cohort import grade_cohort
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.progress import Progress


@pytest.fixture
def no_bubblewrap(monkeypatch):
    monkeypatch.setenv(worker_box.BWRAP_VARIABLE, "/nonexistent/bwrap")
    worker_box.unavailable_reason.cache_clear()
    yield
    monkeypatch.undo()
    worker_box.unavailable_reason.cache_clear()


@pytest.mark.nbgrader
def test_this_machine_boxes_kernels():
    """CI installs bubblewrap: without it (or without user namespaces) this fails rather than skips."""
    worker_box.unavailable_reason.cache_clear()
    assert worker_box.unavailable_reason() is None
    assert worker_box.require(allow_unconfined=False) is True


@pytest.mark.unit
def test_the_box_holds_no_course_and_no_network():
    line = worker_box.command(REPO_ROOT / "kernels", ["python"], 3)
    assert {"--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1"} <= set(line)
    assert line[line.index("--uid") + 1] == str(worker_box.BOX_UID)
    bound = {line[i + 1] for i, word in enumerate(line) if word in ("--bind", "--ro-bind")}
    writable = {line[i + 1] for i, word in enumerate(line) if word == "--bind"}
    assert writable == {str(REPO_ROOT / "kernels")}
    assert str(REPO_ROOT) not in bound and "/" not in bound and "/home" not in bound


@pytest.mark.unit
def test_a_machine_without_the_box_is_refused_unless_the_ta_allows_it(no_bubblewrap):
    refused = worker_box.refusal(allow_unconfined=False)
    assert refused and "bubblewrap" in refused and "--allow-unconfined" in refused
    assert worker_box.refusal(allow_unconfined=True) is None
    with pytest.raises(GraderFailure) as raised:
        worker_box.require(allow_unconfined=False)
    assert raised.value.cause is GraderCause.NO_SANDBOX
    assert worker_box.require(allow_unconfined=True) is False


@pytest.mark.nbgrader
def test_grade_refuses_before_grading_anything(no_bubblewrap):
    ran = subprocess.run(
        [sys.executable, "-m", "gradekit", "grade", "--jobs", "1"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert ran.returncode == 2
    assert "bubblewrap" in ran.stderr and "--allow-unconfined" in ran.stderr


@pytest.mark.nbgrader
@pytest.mark.parametrize("allowed", [False, True], ids=["refused", "allowed"])
def test_every_row_of_an_unconfined_run_says_so(course, manifest, tmp_path, no_bubblewrap, allowed):
    scratch = new_workspace(course, tmp_path / "course", NOTEBOOKS)
    scratch = dataclasses.replace(scratch, allow_unconfined=allowed, grader_attempts=1)
    narrow = manifest.only(list(NOTEBOOKS))
    for student in (HONEST, "another-student"):
        Builder(scratch, narrow, scratch.submitted_dir / student / scratch.assignment_id).write()
    result = grade_cohort(scratch, LocalExecutor(2), NOTEBOOKS, Progress(2, io.StringIO()))
    assert len(result.rows) == 2
    for row in result.rows:
        if allowed:
            assert row.status is Status.GRADED, row.message
            assert [note.kind for note in row.notes] == [NoteKind.UNCONFINED]
            assert "bubblewrap" in row.notes[0].text
        else:
            assert row.status is Status.GRADER_ERROR and row.cause is GraderCause.NO_SANDBOX
