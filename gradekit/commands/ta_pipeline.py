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
from gradekit.core.extensions import read_extensions
from gradekit.core.grades import SubmissionGrades
from gradekit.core.manifest import Manifest
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.core.nbgrader_in_process import export, succeeded
from gradekit.core.outcome import Outcome
from gradekit.core.row_record import load_rows, save_rows
from gradekit.grading.cohort import CohortResult, Executor, grade_cohort, submitted_students
from gradekit.grading.exchange import ensure_exchange
from gradekit.grading.feedback_mathjax import bundle_mathjax
from gradekit.grading.gradebook import late_policy
from gradekit.grading.internal_errors import LOG_NAME
from gradekit.grading.refresh import gradebook_rows, reapply_late_penalties, rows_kept
from gradekit.grading.regrade_diff import RegradeDiff, grades_before, regrade_diff, write_regrade_csv
from gradekit.grading.scratch_gradebook import engine_shared_while
from gradekit.grading.submission_grader import nbgrader_api
from gradekit.lms.export_step import export_for_lms
from gradekit.report.class_figures import TermFacts
from gradekit.report.class_report import write_class_report
from gradekit.report.similarity_page import write_similarity_report
from gradekit.report.tables import student_table

logger = logging.getLogger(__name__)
GRADEBOOK_VARIABLE = "KIT_GRADEBOOK_URL"  # nbgrader_config.py reads it too
# A process of its own pays off once its pages take several times its start: a student's eleven pages
# take about 0.45 s of one core in this process (one gradebook engine for all of them) and about 0.6 s
# in a new one, which first spends about 2 s importing nbgrader. Split in two, the demo's eight
# students took 4.4 s and 8.6 s of CPU; in this process alone, 3.6 s. Two runs win from about a dozen.
FEEDBACK_STUDENTS_PER_RUN = 12


def grade_and_report(
    course: Course,
    manifest: Manifest,
    executor: Executor,
    collect: bool = False,
    cell_timeout: int | None = None,
    only: tuple[str, ...] = (),
) -> CohortResult:
    """Grade the cohort (or the `only` students), then say whose score a regrade changed and write every report."""
    refuse_unknown_students(course, only)
    for folder in ensure_exchange(course.exchange_root, course.course_id):
        logger.info("made the exchange folder %s (release_feedback needs it)", folder)
    if collect:
        run_nbgrader(course, "collect", course.assignment_id)
    notebooks = tuple(entry.name for entry in manifest.notebooks)
    error_log = report_dir(course) / LOG_NAME
    before, earlier = grades_before(course), load_rows(report_dir(course))  # read before anything is graded
    result = grade_cohort(course, executor, notebooks, cell_timeout=cell_timeout, error_log=error_log, only=only)
    regrade = regrade_diff(before, result.rows)
    rows = rows_kept(course, earlier, result.rows) if only else result.rows
    files = write_reports(course, manifest, rows, executor.workers, regrade)
    counted = f"{len(result.rows)} submissions in {result.seconds:.0f} s" + (f" ({len(rows)} reported)" if only else "")
    print_summary(course, rows, files, counted)
    print_regrade(regrade, write_regrade_csv(report_dir(course), regrade))
    return dataclasses.replace(result, rows=rows)


class UnknownStudent(ValueError):
    """`grade --student ID` named a student who handed nothing in."""


def refuse_unknown_students(course: Course, only: tuple[str, ...]) -> None:
    known = {student for _, student in submitted_students(course)}
    unknown = sorted(set(only) - known)
    if unknown:
        raise UnknownStudent(
            f"no submission of {', '.join(unknown)} in {course.submitted_dir}: nothing was graded "
            f"(students who handed in: {', '.join(sorted(known)) or 'none'})"
        )


def print_regrade(regrade: RegradeDiff, written: Path | None) -> None:
    """The regrade's lines (or that this was a first grading) and where its record is."""
    print("\n" + "\n".join(regrade.lines()))
    if written:
        print(f"regrade:      {written}")


def refresh_reports(course: Course, manifest: Manifest, processes: int) -> tuple[Outcome, ...]:
    """`grade --reports-only`: feedback, grades.csv, students.csv, the LMS file and the report from the gradebook.

    Nothing is graded: the scores a TA entered in formgrader count, and the late penalties are
    worked out again from them.
    """
    changed = reapply_late_penalties(course)
    if changed:
        print(f"late penalties worked out again from the current scores: {changed} notebook(s)")
    rows = gradebook_rows(course, load_rows(report_dir(course)))
    files = write_reports(course, manifest, rows, processes)
    print_summary(course, rows, files, f"{len(rows)} submissions read from the gradebook (nothing regraded)")
    return rows


@dataclasses.dataclass(frozen=True)
class ReportFiles:
    lms: Path | None  # None without a roster (or when the roster was refused)
    similarity: Path
    report: Path


def write_reports(
    course: Course, manifest: Manifest, rows: tuple[Outcome, ...], processes: int, regrade: RegradeDiff | None = None
) -> ReportFiles:
    """Everything a grading run writes after the grades: feedback, grades.csv, the LMS file, the reports."""
    if any(row.grades for row in rows):
        generate_feedback(course, processes)
        bundle_mathjax(course.feedback_dir)  # the pages typeset their math from disk too
    export(course, grades_csv(course))
    lms = export_for_lms(course)
    # Written before the class report, which links the page when it is there.
    similarity = write_similarity_report(
        course.submitted_dir, course.release_dir, course.assignment_id, report_dir(course), course.source_dir
    )
    save_rows(report_dir(course), rows)  # what --reports-only gives the gradebook's rows back
    report = write_class_report(
        report_dir(course),
        manifest,
        rows,
        load_catalog(),
        course.feedback_dir,
        course.assignment_id,
        term=term_facts(course),
        regrade=regrade,
    )
    return ReportFiles(lms, similarity, report)


def term_facts(course: Course) -> TermFacts:
    """The due date, the late policy and the extensions, as the class report lists them."""
    extensions = tuple(read_extensions(course.extensions_file).values())
    return TermFacts(course.due_date, late_policy(course).describe(), extensions)


def print_summary(course: Course, rows: tuple[Outcome, ...], files: ReportFiles, counted: str) -> None:
    """The command's table, who needs a TA, and where every file is."""
    statuses = {row.student_id: row.status for row in rows}
    graded = [row.grades for row in rows if row.grades]
    print(student_table(graded, load_catalog(), statuses))
    for row in rows:
        if row.status.needs_ta:
            print(f"{row.student_id}: {row.status.label}: {row.message}")
    for grades in graded:
        if grades.past_cutoff:
            print(f"{grades.student_id}: handed in past the late policy's cut-off: the submission scores 0")
    print(f"\n{counted}: {status_counts(rows)}")
    if any(row.status.withheld for row in rows):
        print("flagged rows have their grade withheld: formgrader lists them as needing manual grading")
    print(waiting_line(graded))
    noted = sum(1 for row in rows if row.notes)
    if noted:
        print(f"notes on {noted} submission(s) (what was set aside or repaired): {report_dir(course) / 'students.csv'}")
    print(f"grades:       {grades_csv(course)}")
    if files.lms:
        print(f"LMS import:   {files.lms}")
    print(f"feedback:     {course.feedback_dir}/<student>/{course.assignment_id}/")
    print(f"class report: {files.report}")
    print(f"similarity:   {files.similarity}")


def generate_feedback(course: Course, processes: int) -> None:
    """nbgrader's generate_feedback for every student with graded notebooks, split among up to `processes` runs at once.

    Each run leaves out the other runs' students (CourseDirectory.student_id_exclude), so every
    student's pages are written by exactly one run; a notebook's page takes a few hundredths of a
    second of one core (the cells the class shares are drawn once per run: feedback_page.py),
    which a class of notebooks still makes the longest step after grading. A
    run of its own is a new process, which spends seconds importing nbgrader (jsonschema's URI
    grammars above all) before its first page, so each gets at least FEEDBACK_STUDENTS_PER_RUN
    students; a single run is nbgrader's API in this process, which has nbgrader loaded already.
    """
    folder = course.autograded_dir
    students = sorted(path.name for path in folder.iterdir() if path.is_dir()) if folder.is_dir() else []
    runs = max(1, min(processes, len(students) // FEEDBACK_STUDENTS_PER_RUN))
    if runs == 1:
        feedback_in_process(course)
        return
    groups = [students[start::runs] for start in range(runs)]
    commands = [
        (
            course,
            "generate_feedback",
            course.assignment_id,
            "--force",
            "--CourseDirectory.student_id_exclude=" + ",".join(s for s in students if s not in group),
        )
        for group in groups
    ]
    with ThreadPoolExecutor(len(commands)) as pool:
        for done in [pool.submit(run_nbgrader, *args) for args in commands]:
            done.result()  # a failed run raises here, as the single run would


def feedback_in_process(course: Course) -> None:
    """nbgrader's generate_feedback of every graded student, through its API, configured as the course says."""
    with engine_shared_while(course.db_url):
        outcome = nbgrader_api(course, warm_kernels=False).generate_feedback(course.assignment_id, force=True)
    succeeded(outcome, "generate_feedback")


class NotACourseFolder(ValueError):
    """`grade --course DIR` was pointed at a folder that holds no course."""


def course_in_folder(course: Course, folder: Path) -> Course:
    """The same course kept in `folder`: its own submitted/, source/, release/ and SQLite gradebook.

    A folder with an nbgrader_config.py of its own is read as nbgrader run there reads it (its due
    dates and late policy with it), as if the TA ran the command in it. A gradebook URL from the
    environment (KIT_GRADEBOOK_URL) still wins, as it does for the course here.
    """
    moved = course_here(folder) or course.at(folder)
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


def status_counts(rows: tuple[Outcome, ...]) -> str:
    """ "12 graded, 1 flagged for a TA": every status the rows have, the most urgent first."""
    counts = Counter(row.status for row in rows)
    present = sorted(counts, key=lambda status: status.urgency)
    return ", ".join(f"{counts[status]} {status.headline}" for status in present) or "none"


def grades_csv(course: Course) -> Path:
    return course.root / "grades.csv"


def report_dir(course: Course) -> Path:
    return course.root / "class-report"
