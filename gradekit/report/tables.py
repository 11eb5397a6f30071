"""Plain-text tables for the terminal: the proof matrix and the per-student summary."""

from __future__ import annotations

from gradekit.catalog import Misconception
from gradekit.grading.gradebook import SubmissionGrades
from gradekit.grading.status import Status
from gradekit.manifest import Manifest
from gradekit.proof.subjects import Subject


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


def proof_matrix(manifest: Manifest, subjects: tuple[Subject, ...], grades: dict[str, SubmissionGrades]) -> str:
    """One block per notebook: rows are submissions, columns its test cells; `*` marks a control's declared cells."""
    blocks = []
    for entry in manifest.notebooks:
        tests = manifest.test_cells_of(entry.name)
        header = ["submission", *[t.cell.removeprefix("test_") for t in tests], "named"]
        rows = []
        for subject in subjects:
            if entry.name not in subject.notebooks:
                continue
            submission = grades[subject.student_id]
            declared = subject.control.fails if subject.control else ()
            row = [subject.student_id]
            for test in tests:
                grade = submission.cell(entry.name, test.cell)
                mark = "*" if test.cell in declared else ""
                row.append("-" if grade is None else f"{grade.score:g}/{grade.max_score:g}{mark}")
            row.append(", ".join(m for g in submission.of_notebook(entry.name) for m in g.diagnosed))
            rows.append(row)
        blocks.append(f"{entry.name}  (section {entry.section}: {entry.title})\n" + _table(header, rows))
    return "\n\n".join(blocks)


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
                statuses.get(submission.student_id, Status.GRADED),
                f"{submission.score:g}/{submission.max_score:g}",
                named or "-",
            ]
        )
    return _table(["student", "status", "score", "misconceptions diagnosed"], rows)
