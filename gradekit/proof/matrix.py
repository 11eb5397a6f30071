"""The proof's matrix for the terminal: one block per notebook, rows are submissions, columns its test cells."""

from __future__ import annotations

from gradekit.core.grades import SubmissionGrades
from gradekit.core.manifest import Manifest
from gradekit.core.text_table import text_table
from gradekit.proof.subjects import Subject


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
        blocks.append(f"{entry.name}  (section {entry.section}: {entry.title})\n" + text_table(header, rows))
    return "\n\n".join(blocks)
