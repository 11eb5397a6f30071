"""The TA's one command: collect, autograde the cohort, generate feedback, export grades, write the class report."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gradekit.core.catalog import load_catalog
from gradekit.core.course import CONFIG_FILE, Course, load_course
from gradekit.core.grades import SubmissionGrades
from gradekit.core.manifest import Manifest
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.core.rows import CohortRow
from gradekit.grading.cohort import CohortResult, Executor, grade_cohort
from gradekit.grading.exchange import ensure_exchange
from gradekit.grading.feedback_mathjax import bundle_mathjax
from gradekit.grading.internal_errors import LOG_NAME
from gradekit.lms.export_step import export_for_lms
from gradekit.report.class_report import write_class_report
from gradekit.report.similarity_page import write_similarity_report
from gradekit.report.tables import student_table

logger = logging.getLogger(__name__)
GRADEBOOK_VARIABLE = "KIT_GRADEBOOK_URL"  # nbgrader_config.py reads it too


def grade_and_report(
    course: Course,
    manifest: Manifest,
    executor: Executor,
    collect: bool = False,
    cell_timeout: int | None = None,
) -> CohortResult:
    for folder in ensure_exchange(course.exchange_root, course.course_id):
        logger.info("made the exchange folder %s (release_feedback needs it)", folder)
    if collect:
        run_nbgrader(course, "collect", course.assignment_id)
    notebooks = tuple(entry.name for entry in manifest.notebooks)
    error_log = report_dir(course) / LOG_NAME
    result = grade_cohort(course, executor, notebooks, cell_timeout=cell_timeout, error_log=error_log)
    if any(row.grades for row in result.rows):
        generate_feedback(course, executor.workers)
        bundle_mathjax(course.feedback_dir)  # the pages typeset their math from disk too
    run_nbgrader(course, "export", f"--to={grades_csv(course)}")
    lms_file = export_for_lms(course)
    # Written before the class report, which links the page when it is there.
    similarity = write_similarity_report(
        course.submitted_dir, course.release_dir, course.assignment_id, report_dir(course), course.source_dir
    )
    report = write_class_report(
        report_dir(course),
        manifest,
        result.rows,
        load_catalog(),
        course.feedback_dir,
        course.assignment_id,
    )
    statuses = {row.student_id: row.status for row in result.rows}
    graded = [row.grades for row in result.rows if row.grades]
    print(student_table(graded, load_catalog(), statuses))
    for row in result.rows:
        if row.status.needs_ta:
            print(f"{row.student_id}: {row.status.label}: {row.message}")
    print(f"\n{len(result.rows)} submissions in {result.seconds:.0f} s: {status_counts(result.rows)}")
    if result.flagged:
        print("flagged rows have their grade withheld: formgrader lists them as needing manual grading")
    print(waiting_line(graded))
    noted = sum(1 for row in result.rows if row.notes)
    if noted:
        print(f"notes on {noted} submission(s) (what was set aside or repaired): {report_dir(course) / 'students.csv'}")
    print(f"grades:       {grades_csv(course)}")
    if lms_file:
        print(f"LMS import:   {lms_file}")
    print(f"feedback:     {course.feedback_dir}/<student>/{course.assignment_id}/")
    print(f"class report: {report}")
    print(f"similarity:   {similarity}")
    return result


def generate_feedback(course: Course, processes: int) -> None:
    """nbgrader's generate_feedback for every student with graded notebooks, split among `processes` runs at once.

    Each run leaves out the other runs' students (CourseDirectory.student_id_exclude), so every
    student's pages are written by exactly one run; converting a notebook takes about half a
    second of one core, which a class of notebooks makes the longest step after grading.
    """
    folder = course.autograded_dir
    students = sorted(path.name for path in folder.iterdir() if path.is_dir()) if folder.is_dir() else []
    groups = [students[start::processes] for start in range(max(1, min(processes, len(students))))]
    if len(groups) == 1:
        run_nbgrader(course, "generate_feedback", course.assignment_id, "--force")
        return
    runs = [
        (
            course,
            "generate_feedback",
            course.assignment_id,
            "--force",
            "--CourseDirectory.student_id_exclude=" + ",".join(s for s in students if s not in group),
        )
        for group in groups
    ]
    with ThreadPoolExecutor(len(runs)) as pool:
        for done in [pool.submit(run_nbgrader, *args) for args in runs]:
            done.result()  # a failed run raises here, as the single run would


class NotACourseFolder(ValueError):
    """`grade --course DIR` was pointed at a folder that holds no course."""


def course_in_folder(course: Course, folder: Path) -> Course:
    """The same course kept in `folder`: its own submitted/, source/, release/ and SQLite gradebook.

    A gradebook URL from the environment (KIT_GRADEBOOK_URL) still wins, as it does for the course here.
    """
    moved = course.at(folder)
    if not moved.source_dir.is_dir():
        raise NotACourseFolder(
            f"{folder} is not a course folder: it has no {moved.source_dir.relative_to(moved.root)}/"
        )
    url = os.environ.get(GRADEBOOK_VARIABLE)
    return dataclasses.replace(moved, db_url=url) if url else moved


def course_here(folder: Path) -> Course | None:
    """The course of `folder` when it is a course folder of its own (its source and nbgrader_config.py), as nbgrader reads it.

    A TA who runs the grade command in such a folder (the demo's, say) grades that course, as
    nbgrader run there would; the kit's own folder, or any other, gives None.
    """
    config = folder / CONFIG_FILE.name
    if not config.is_file() or config.resolve() == CONFIG_FILE.resolve():
        return None
    course = load_course(config)
    return course if course.source_dir.is_dir() else None


def notebooks_present(course: Course, manifest: Manifest) -> Manifest:
    """The manifest narrowed to the notebooks the course's source holds (a demo course may hold a few)."""
    present = [entry.name for entry in manifest.notebooks if (course.source_dir / f"{entry.name}.ipynb").is_file()]
    return manifest.only(present) if present else manifest


def waiting_line(graded: list[SubmissionGrades]) -> str:
    """How many written answers wait for a TA in formgrader, and in how many submissions."""
    waiting = [grades for grades in graded if grades.waiting]
    answers = sum(len(grades.waiting) for grades in waiting)
    points = sum(w.max_score for grades in waiting for w in grades.waiting)
    if not answers:
        return "written answers waiting for a TA: none"
    return (
        f"written answers waiting for a TA: {answers} in {len(waiting)} submission(s), {points:g} points "
        "(grade them in formgrader; grades.csv counts them once graded)"
    )


def status_counts(rows: tuple[CohortRow, ...]) -> str:
    """ "12 graded, 1 flagged for a TA": every status the rows have, the most urgent first."""
    counts = Counter(row.status for row in rows)
    present = sorted(counts, key=lambda status: status.urgency)
    return ", ".join(f"{counts[status]} {status.headline}" for status in present) or "none"


def grades_csv(course: Course) -> Path:
    return course.root / "grades.csv"


def report_dir(course: Course) -> Path:
    return course.root / "class-report"
