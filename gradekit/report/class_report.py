"""The class report: the page a TA opens first after grading, and the same figures as CSV files.

report.html is one self-contained page (class_report_page.py); beside it
students.csv, exercises.csv, cells.csv (share of points earned and discrimination, see
item_statistics.py), misconceptions.csv and notes.csv (class_report_files.py).
Each file is replaced atomically, so a reader never sees half a report.
"""

from __future__ import annotations

from pathlib import Path

from gradekit.core.catalog import Misconception
from gradekit.core.manifest import Manifest
from gradekit.core.outcome import Outcome
from gradekit.grading.regrade_diff import RegradeDiff
from gradekit.report.class_figures import TermFacts, class_report
from gradekit.report.class_report_files import write_csv_files, write_page
from gradekit.report.item_statistics import MIN_SUBMITTERS


def write_class_report(
    folder: Path,
    manifest: Manifest,
    rows: tuple[Outcome, ...],
    catalog: dict[str, Misconception],
    feedback_dir: Path | None = None,
    assignment_id: str = "",
    minimum: int = MIN_SUBMITTERS,
    term: TermFacts | None = None,
    regrade: RegradeDiff | None = None,
) -> Path:
    """Write report.html and its CSV files into `folder`; returns report.html.

    `feedback_dir` is the course's feedback folder: student names link to their pages in it.
    Discrimination is computed for notebooks with at least `minimum` submitters; `term` is the
    due date, late policy and extensions the report lists; `regrade`, whose score this run changed.
    """
    folder.mkdir(parents=True, exist_ok=True)
    report = class_report(folder, manifest, rows, catalog, feedback_dir, assignment_id, minimum, term, regrade)
    write_csv_files(folder, report)
    return write_page(folder, report)
