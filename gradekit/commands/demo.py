"""`make demo`: the main job on the embedded defaults (SQLite gradebook, local worker processes).

Sets up a demo course directory from the committed source (its own gradebook,
wiped on every run, so a real course's gradebook is never touched), hands in
the work of a small class (demo_cohort.py: every notebook, mistakes drawn from
the negative controls, correct alternatives, written answers, a late, a broken
and a copied submission; with `full`, the proof's pseudo students instead: the
reference, the blank stubs and every control), then runs the TA's pipeline on
it: parallel autograding with progress, feedback, grades.csv, the class report
and a table of who scored what and which misconceptions their feedback names.
"""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import nbformat

from gradekit.authoring.due_header import add_due_headers
from gradekit.authoring.release import new_workspace
from gradekit.authoring.solutions import load_controls
from gradekit.commands.demo_cohort import DemoStudent, demo_cohort
from gradekit.commands.demo_folder import complete_course_folder, state_due_date, write_roster
from gradekit.commands.digits import NOTEBOOK, train_on_digits
from gradekit.commands.ta_pipeline import grade_and_report
from gradekit.core.cores import default_jobs
from gradekit.core.course import Course
from gradekit.core.manifest import Manifest
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.gradebook import open_gradebook
from gradekit.grading.intake import TIMESTAMP, TIMESTAMP_FORMAT, stamp
from gradekit.proof.subjects import Subject, fill_answers, mixed_answer_sources, proof_subjects, write_submission

HOURS_SINCE_DUE = 6  # the demo's due date lies this far before the run, so the late hand-in is already in


def demo_course(course: Course, manifest: Manifest, root: Path) -> Course:
    """A fresh course folder at `root` with the release of the manifest's notebooks built, complete for a TA."""
    if root.exists():
        shutil.rmtree(root)
    return complete_course_folder(new_workspace(course, root, tuple(entry.name for entry in manifest.notebooks)))


def demo_subjects(manifest: Manifest) -> tuple[Subject, ...]:
    """`--full`: the reference, the blank stubs and every negative control and alternative, as the proof grades them."""
    return proof_subjects(manifest, load_controls(manifest))


def demo_size(manifest: Manifest, full: bool = False) -> int:
    """How many submissions the demo grades."""
    return len(demo_subjects(manifest)) if full else len(demo_cohort(manifest, load_controls(manifest)))


def due_date(now: datetime.datetime | None = None) -> datetime.datetime:
    """The demo assignment's due date, on the hour, in UTC without a zone (as nbgrader's gradebook keeps dates)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    due = now - datetime.timedelta(hours=HOURS_SINCE_DUE)
    return due.replace(minute=0, second=0, microsecond=0, tzinfo=None)


def write_demo_student(course: Course, manifest: Manifest, student: DemoStudent, due: datetime.datetime) -> Path:
    """The student's submission in submitted/, stamped with their hand-in time, as nbgrader's submit leaves it."""
    folder = course.submitted_dir / student.student_id / course.assignment_id
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for entry in manifest.notebooks:
        sources = mixed_answer_sources(manifest, entry.name, student.answers_of(entry.name))
        sources |= {cell: text for cell, text in student.written if entry.name == notebook_of_answer(manifest, cell)}
        notebook = fill_answers(course.release_dir / f"{entry.name}.ipynb", sources)
        target = folder / f"{entry.name}.ipynb"
        if entry.name in student.broken:  # cut short, as a notebook saved while the disk filled up
            text = nbformat.writes(notebook)
            target.write_text(text[: len(text) // 3])
        else:
            nbformat.write(notebook, target)
    handed_in = due + datetime.timedelta(minutes=student.minutes_after_due)
    (folder / TIMESTAMP).write_text(handed_in.replace(tzinfo=datetime.timezone.utc).strftime(TIMESTAMP_FORMAT))
    stamp(folder)  # the secret nbgrader's submit writes beside the timestamp
    return folder


def notebook_of_answer(manifest: Manifest, answer_cell: str) -> str:
    """The notebook holding a written answer cell."""
    return next((m.notebook for m in manifest.manual if m.answer_cell == answer_cell), "")


def enrol(course: Course, students: tuple[DemoStudent, ...]) -> None:
    """The class's names in the gradebook, as a TA sets them up before grading."""
    with open_gradebook(course) as gradebook:
        for student in students:
            gradebook.update_or_create_student(
                student.student_id, first_name=student.first_name, last_name=student.last_name
            )


def with_due_date(demo: Course, due: datetime.datetime) -> Course:
    """The demo course with its due date, zoned in UTC and stated in its folder's configuration."""
    return state_due_date(demo, due.replace(tzinfo=datetime.timezone.utc))


def hand_in_cohort(demo: Course, manifest: Manifest, due: datetime.datetime) -> tuple[DemoStudent, ...]:
    students = demo_cohort(manifest, load_controls(manifest))
    enrol(demo, students)
    for student in students:
        write_demo_student(demo, manifest, student, due)
    print(f"{len(students)} students handed in every notebook (due {due:%Y-%m-%d %H:%M} UTC):")
    for student in students:
        print(f"  {student.student_id:<8} {describe(student)}")
    return students


def describe(student: DemoStudent) -> str:
    """What the demo put in a student's work, so the reader can find it again in the report."""
    parts = [f"{len(student.mistakes)} mistakes, {len(student.answers) - len(student.mistakes)} alternatives"]
    if student.written:
        parts.append(f"{len(student.written)} written answers")
    if student.late:
        parts.append(f"handed in {student.minutes_after_due} min late")
    if student.broken:
        parts.append(f"{', '.join(student.broken)} is not valid JSON")
    if student.copied_from:
        parts.append(f"copied {', '.join(student.copied)} and the written answers from {student.copied_from}")
    return "; ".join(parts)


def run_demo(demo: Course, manifest: Manifest, jobs: int | None = None, full: bool = False) -> int:
    print(f"demo course: {demo.root} (release built in {demo.release_dir})")
    if full:
        subjects = demo_subjects(manifest)
        for subject in subjects:
            write_submission(demo, demo.release_dir, manifest, subject)
        print(f"{len(subjects)} pseudo students: the reference, the blank stubs and every control and alternative")
        print(
            "(each control-* student submits only the notebook its control rewrites; nbgrader scores missing ones zero)"
        )
    else:
        due = due_date()
        demo = with_due_date(demo, due)
        add_due_headers(demo.release_dir, due.replace(tzinfo=datetime.timezone.utc))  # the notebooks say when
        hand_in_cohort(demo, manifest, due)
        print("(--full grades the proof's pseudo students instead: the reference, blank stubs and every control)")
    write_roster(demo)
    result = grade_and_report(demo, manifest, LocalExecutor(jobs or default_jobs()))
    if any(entry.name == NOTEBOOK for entry in manifest.notebooks):
        loss, accuracy, seconds = train_on_digits(demo, manifest)
        print(
            f"raw-tensor MLP (reference) on the local MNIST digits: test accuracy {accuracy:.3f}, loss {loss:.4f} ({seconds:.1f} s)"
        )
    return 0 if not result.failed else 1
