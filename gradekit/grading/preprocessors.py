"""The course's own nbgrader preprocessors; nbgrader_config.py lists them in its pipelines.

This module imports nothing of the kit: the configuration loads it by its path,
so that plain nbgrader can use it without the kit on its import path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

if TYPE_CHECKING:
    from nbformat import NotebookNode

VISIBLE_PASSED = "Checked "  # how a test cell's visible part reports what it checked, once it all passed


class DiagnosesOnly(NbGraderPreprocessor):
    """In feedback, replace a graded cell's traceback by its last line, unless the error is one of our diagnoses.

    A failed check's `Diagnosis` teaches the student; any other traceback would
    show the grader's code, so only its last line stays. In a cell that failed,
    the visible part's report of what it checked would sit right above the
    diagnosis of a zero: it gains a sentence saying that only those checks passed.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            outputs = cell.get("outputs", [])
            failed = any(output.get("output_type") == "error" for output in outputs)
            for output in outputs:
                if output.get("output_type") == "error" and output.get("ename") != "Diagnosis":
                    output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
                if failed and output.get("output_type") == "stream" and output.get("name") == "stdout":
                    output["text"] = _passed_only_on_the_example(output.get("text", ""))
        return cell, resources


def _passed_only_on_the_example(text: str) -> str:
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.startswith(VISIBLE_PASSED):
            lines[number] = f"{line.rstrip()} Those passed, but the grader's own checks failed:\n"
    return "".join(lines)


def is_mark_scheme(cell: NotebookNode) -> bool:
    """A task cell worth no points: the question and its mark scheme, graded through its answer cell."""
    grading = cell.get("metadata", {}).get("nbgrader", {})
    return bool(grading.get("task")) and float(grading.get("points") or 0) == 0


class GradeMarkSchemes(NbGraderPreprocessor):
    """During autograde, record each 0-point task cell as graded: 0 of 0, nothing for a TA to do.

    nbgrader counts every task cell as waiting for a manual grade until a TA types a score,
    so a question that carries only its mark scheme would keep every submission on the TA's list.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        schemes = [cell.metadata.nbgrader.grade_id for cell in nb.cells if is_mark_scheme(cell)]
        if schemes:
            about = resources["nbgrader"]
            with Gradebook(about["db_url"]) as gradebook:
                for grade_id in schemes:
                    grade = gradebook.find_grade(grade_id, about["notebook"], about["assignment"], about["student"])
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
                gradebook.db.commit()
        return nb, resources
