"""A grading worker that dies takes down only the submission that killed it."""
import os
from pathlib import Path

from gradekit.grading.executors import LocalExecutor
from gradekit.grading.submission_grader import GradedSubmission


def kill_on_poison(template_root, folder, student):
    """Stands in for real grading: the worker process dies on the poisoned submission."""
    if student == "poison":
        os._exit(9)
    return GradedSubmission(student, "graded", "", None, (), 0.0, f"test:{os.getpid()}")


def test_only_the_culprit_fails_when_a_worker_dies(tmp_path):
    tasks = [(Path(tmp_path), name) for name in ("amy", "ben", "poison", "cleo", "dan", "eve")]
    outcomes = {g.student_id: g for g in LocalExecutor(2, task=kill_on_poison).grade_all(tmp_path, tasks)}
    assert set(outcomes) == {name for _, name in tasks}
    assert outcomes["poison"].status == "failed" and "worker" in outcomes["poison"].message
    assert all(g.status == "graded" for name, g in outcomes.items() if name != "poison")
