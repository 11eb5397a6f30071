"""The per-student summary of a cohort run, as a plain-text table for the terminal."""

from __future__ import annotations

from gradekit.core.catalog import Misconception
from gradekit.core.grades import SubmissionGrades
from gradekit.core.status import Status
from gradekit.core.text_table import text_table


def student_table(
    grades: list[SubmissionGrades], catalog: dict[str, Misconception], statuses: dict[str, Status]
) -> str:
    """Each student's total and the misconceptions their feedback names."""
    rows = []
    for submission in grades:
        named = "; ".join(f"{m} ({catalog[m].title})" if m in catalog else m for m in submission.diagnosed)
        rows.append(
            [
                submission.student_id,
                statuses.get(submission.student_id, Status.GRADED).label,
                f"{submission.score:g}/{submission.max_score:g}",
                submission.written_summary,
                submission.late_summary,
                named or "-",
            ]
        )
    return text_table(["student", "status", "autograded", "written", "late", "misconceptions diagnosed"], rows)
