"""The oracle's words for a disagreement name the differing cells and their scores (no nbgrader run)."""

import pytest

from gradekit.grading.gradebook_records import GradeRecord, NotebookRecord, SubmissionRecord
from gradekit.proof import oracle

pytestmark = pytest.mark.unit


def test_a_differing_grade_is_named_with_both_scores(monkeypatch):
    def record(score: float) -> SubmissionRecord:
        grades = (GradeRecord("test_leaf", score, None, None, False),)
        return SubmissionRecord("student", None, (NotebookRecord("010_history", False, None, grades, ()),))

    records = {"engine": record(2.0), "twin": record(0.0)}
    monkeypatch.setattr(oracle, "read_record", lambda course, student: records[course])

    found = oracle.disagreements("engine", "twin", ("student",), ("010_history",))  # names stand in for the courses

    assert found == ["student 010_history: sealed and plain differ (test_leaf: 2.0 vs 0.0)"]
