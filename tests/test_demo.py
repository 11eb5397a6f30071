"""`make demo` on a scratch copy of the course: the demo class graded, exported, explained and reported."""

import csv
import datetime

import nbformat
import pytest

from gradekit.authoring.due_header import METADATA_KEY, header_text
from gradekit.authoring.solutions import load_controls
from gradekit.commands.demo import demo_course, demo_size, demo_subjects, run_demo
from gradekit.commands.demo_cohort import demo_cohort
from gradekit.proof.subjects import proof_subjects

pytestmark = pytest.mark.nbgrader

NOTEBOOKS = ["010_history", "021_cotangents"]  # two, so the broken notebook leaves one to grade


def test_demo_grades_exports_and_explains_a_class(course, manifest, tmp_path, capsys):
    narrow = manifest.only(NOTEBOOKS)
    scratch = demo_course(course, narrow, tmp_path / "course")
    assert run_demo(scratch, narrow) == 0
    printed = capsys.readouterr().out
    cohort = demo_cohort(narrow, load_controls(narrow))
    with open(scratch.root / "grades.csv", newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {s.student_id for s in cohort}
    broken = next(s for s in cohort if s.broken)
    (unreadable,) = broken.broken
    with open(scratch.root / "class-report" / "students.csv", newline="") as handle:
        table = {row["student_id"]: row for row in csv.DictReader(handle)}
    late = next(s for s in cohort if s.late)
    assert int(table[late.student_id]["minutes_late"]) == late.minutes_after_due
    assert all(int(table[s.student_id]["minutes_late"]) == 0 for s in cohort if not s.late)
    assert f"{unreadable}.ipynb cannot be read as a notebook" in table[broken.student_id]["notes"]
    assert table[broken.student_id]["unsubmitted"] == unreadable
    report = (scratch.root / "class-report" / "report.html").read_text()
    assert f"handed in 1 h {late.minutes_after_due - 60} min after the due date" in report
    for release in sorted(scratch.release_dir.glob("*.ipynb")):  # what the class fetched says when it is due
        notebook = nbformat.read(release, as_version=4)
        due = datetime.datetime.fromisoformat(notebook.metadata[METADATA_KEY])
        assert notebook.cells[0].source == header_text(due), release.name
        assert due < datetime.datetime.now(datetime.timezone.utc)  # the late student is past it
    for student in cohort:
        line = table_row(printed, student.student_id)
        for notebook in NOTEBOOKS:
            if notebook in student.broken:
                assert not (scratch.feedback_dir / student.student_id / "autograd" / f"{notebook}.html").exists()
                continue
            feedback = (scratch.feedback_dir / student.student_id / "autograd" / f"{notebook}.html").read_text()
            for mistake in student.mistakes:
                if mistake.notebook == notebook:
                    assert mistake.misconception in line, (student.student_id, mistake.name)
                    assert f"misconception: {mistake.misconception}]" in feedback
            # The student sees the diagnosis, never the hidden tests.
            assert "HIDDEN TESTS" not in feedback and "for seed, size in" not in feedback
    copier = next(s for s in cohort if s.copied_from)
    similarity = (scratch.root / "class-report" / "similarity.html").read_text()
    pair = " and ".join(sorted((copier.student_id, copier.copied_from)))
    (copied,) = copier.copied
    if copier.answers_of(copied):  # the copy holds code of its own; the model answer alone is never a match
        assert f"{pair}, {copied}" in similarity


def table_row(printed: str, student_id: str) -> str:
    """The student's row of the printed table, its wrapped continuation lines (blank first column) joined on."""
    lines = printed.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(student_id + " "))
    end = next((n for n in range(start + 1, len(lines)) if not lines[n].startswith(" ")), len(lines))
    return " ".join(lines[start:end])


def test_full_grades_the_proofs_pseudo_students_and_the_default_the_demo_class(manifest):
    controls = load_controls(manifest)
    assert demo_subjects(manifest) == proof_subjects(manifest, controls)
    assert demo_size(manifest, full=True) == len(proof_subjects(manifest, controls))
    assert demo_size(manifest) == len(demo_cohort(manifest, controls))
