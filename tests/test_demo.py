"""`make demo` on a scratch copy of the course: grades.csv, feedback and the per-student table."""

import csv

import pytest

from gradekit.authoring.solutions import load_controls
from gradekit.commands.demo import demo_course, demo_subjects, run_demo

pytestmark = pytest.mark.nbgrader


def test_demo_grades_exports_and_explains_a_cohort(course, manifest, tmp_path, capsys):
    narrow = manifest.only(["010_history"])
    scratch = demo_course(course, narrow, tmp_path / "course")
    assert run_demo(scratch, narrow) == 0
    printed = capsys.readouterr().out
    controls = load_controls(narrow)[:1]  # by default, the first listed control of each notebook
    assert "--full grades every control" in printed
    with open(scratch.root / "grades.csv", newline="") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"reference", "blank", *(c.student_id for c in controls)}
    assert float(rows["reference"]["score"]) == float(rows["reference"]["max_score"]) == narrow.points_of("010_history")
    assert float(rows["blank"]["score"]) == 0
    for student in rows:
        assert (scratch.feedback_dir / student / "autograd" / "010_history.html").is_file()
    for control in controls:
        line = next(l for l in printed.splitlines() if l.startswith(control.student_id + " "))
        assert control.misconception in line
        feedback = (scratch.feedback_dir / control.student_id / "autograd" / "010_history.html").read_text()
        # The student sees the diagnosis, never the hidden tests.
        assert f"misconception: {control.misconception}]" in feedback
        assert "HIDDEN TESTS" not in feedback and "for seed, size in" not in feedback
    blank_feedback = (scratch.feedback_dir / "blank" / "autograd" / "010_history.html").read_text()
    assert "not written yet" in blank_feedback and "Traceback (most recent call last)" not in blank_feedback


def test_the_default_cohort_is_small_and_telling_and_full_takes_every_control(manifest):
    controls = load_controls(manifest)
    default = demo_subjects(manifest)
    assert [s.student_id for s in default[:2]] == ["reference", "blank"]
    chosen = [s.control for s in default[2:]]
    assert [c.notebook for c in chosen] == [entry.name for entry in manifest.notebooks]
    assert chosen == [next(c for c in controls if c.notebook == entry.name) for entry in manifest.notebooks]
    assert [s.control for s in demo_subjects(manifest, full=True)[2:]] == list(controls)
