"""What a pre-check tells the student: per test cell the points and the diagnosis, and never a line of hidden test code.

Only values leave: the points from the gradebook record, the misconception ids
a failed check named, and the one line it said (its error's name and value).
No traceback, no cell source and no output beyond that line is read. Every
text is then cut wherever it repeats a line of the hidden tests, and the whole
reply is checked once more before it is sent (`leaked_lines`).
"""

from __future__ import annotations

import json

import nbformat

from gradekit.core.cell_ids import grade_id
from gradekit.core.diagnoses import failure_message, failure_text, named_misconceptions
from gradekit.core.status import Status
from gradekit.grading.safe_execute import CUT_NOTICE, SHORTEST_SECRET, hidden_test_lines
from gradekit.grading.submission_grader import GradedSubmission

DIAGNOSIS = "Diagnosis: "  # how a failed check's own error begins in its one line


def secret_lines(source_notebook) -> frozenset[str]:
    """The hidden test lines of a trusted source notebook, with their spacing made single as the one-line texts have it."""
    return frozenset(" ".join(line.split()) for line in hidden_test_lines(source_notebook))


def graded_test_cells(source_notebook) -> tuple[tuple[str, float], ...]:
    """(grade id, points) of every autograded test cell of the source notebook, in order."""
    found = []
    for cell in source_notebook.cells:
        grading = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and grading.get("grade") and not grading.get("solution"):
            found.append((grading["grade_id"], float(grading.get("points") or 0)))
    return tuple(found)


def cut_secrets(text: str, secrets: frozenset[str]) -> str:
    """`text` with every repeat of a hidden test line replaced by the grader's notice."""
    for line in secrets:
        if len(line) >= SHORTEST_SECRET and line in text:
            text = text.replace(line, CUT_NOTICE)
    return text


def leaked_lines(reply: dict, secrets: frozenset[str]) -> list[str]:
    """The hidden test lines that appear anywhere in the reply as it will be sent (an empty list for a sound reply)."""
    sent = json.dumps(reply, ensure_ascii=False)
    words = " ".join(sent.split())
    return sorted(line for line in secrets if len(line) >= SHORTEST_SECRET and (line in sent or line in words))


def student_reply(notebook: str, graded: GradedSubmission, source_notebook, secrets: frozenset[str]) -> dict:
    """The reply for one graded notebook; `source_notebook` is the trusted copy with its points and hidden tests."""
    if graded.status is Status.GRADER_ERROR:
        return grader_error_reply()
    if graded.status is Status.FAILED or graded.record is None:
        return {"status": "not graded", "message": cut_secrets(graded.message, secrets), "cells": []}
    if graded.status is Status.FLAGGED:
        return {
            "status": "held for a TA",
            "message": "The grader would hold this notebook for a TA to look at, so the pre-check shows no points: "
            + cut_secrets("; ".join(finding.text for finding in graded.findings), secrets),
            "cells": [],
        }
    cells = _cell_replies(notebook, graded, source_notebook, secrets)
    return {
        "status": "graded",
        "message": "",
        "score": sum(cell["points"] for cell in cells),
        "max_score": sum(cell["max_points"] for cell in cells),
        "cells": cells,
    }


def grader_error_reply() -> dict:
    """The reply when the grader, not the notebook, failed: nothing is scored and the check is not counted."""
    return {
        "status": "grader error",
        "message": "The pre-check failed on the grader's side, not because of your notebook. "
        "It was not counted: try again in a minute.",
        "cells": [],
    }


def _cell_replies(notebook: str, graded: GradedSubmission, source_notebook, secrets: frozenset[str]) -> list[dict]:
    records = {entry.name: entry for entry in graded.record.notebooks} if graded.record else {}
    scores = {grade.cell: grade.auto_score for grade in records[notebook].grades} if notebook in records else {}
    outputs = _graded_cells(notebook, graded)
    replies = []
    for cell_id, max_points in graded_test_cells(source_notebook):
        points = float(scores.get(cell_id) or 0.0)
        graded_cell = outputs.get(cell_id)
        said = failure_message(graded_cell) if graded_cell is not None and points < max_points else ""
        replies.append(
            {
                "cell": cell_id,
                "points": points,
                "max_points": max_points,
                "passed": points >= max_points,
                "misconceptions": list(named_misconceptions(failure_text(graded_cell)))
                if graded_cell is not None and points < max_points
                else [],
                "diagnosis": cut_secrets(said.removeprefix(DIAGNOSIS), secrets),
            }
        )
    return replies


def _graded_cells(notebook: str, graded: GradedSubmission) -> dict:
    contents = dict(graded.files).get(f"{notebook}.ipynb")
    if contents is None:
        return {}
    autograded = nbformat.reads(contents.decode(), as_version=4)
    return {grade_id(cell): cell for cell in autograded.cells if grade_id(cell) and cell.cell_type == "code"}
