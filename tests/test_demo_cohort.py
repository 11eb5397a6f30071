"""The demo's class (demo_cohort.py) and how its work is handed in (demo.write_demo_student), without grading it."""

import datetime
import json
from collections import Counter

import nbformat
import pytest

from gradekit.authoring.solutions import load_controls
from gradekit.commands.demo import due_date, write_demo_student
from gradekit.commands.demo_cohort import (
    DEMO_SIZE,
    MINUTES_LATE,
    NAMES,
    WRITTEN_NOTEBOOK,
    WRITTEN_POOLS,
    demo_cohort,
)
from gradekit.core.cell_ids import cells_by_grade_id
from gradekit.grading.intake import TIMESTAMP, take_in
from gradekit.report.written_similarity import runs

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def controls(manifest):
    return load_controls(manifest)


@pytest.fixture(scope="module")
def cohort(manifest, controls):
    return demo_cohort(manifest, controls)


def test_the_same_seed_gives_the_same_class_and_another_seed_another(manifest, controls, cohort):
    assert demo_cohort(manifest, controls) == cohort
    assert demo_cohort(manifest, controls, seed=24) != cohort
    assert len(cohort) == DEMO_SIZE
    assert [s.student_id for s in cohort] == [first.lower() for first, _ in NAMES[:DEMO_SIZE]]
    with pytest.raises(ValueError):
        demo_cohort(manifest, controls, size=3)


def test_answers_come_from_the_controls_and_alternatives_mixed_and_at_most_one_per_function(cohort, controls):
    for student in cohort:
        assert set(student.answers) <= set(controls)
        functions = [(a.notebook, a.function) for a in student.answers]
        assert len(functions) == len(set(functions)), student.student_id
    assert all(student.mistakes for student in cohort)  # nobody is the reference in disguise
    assert any(len(student.answers) > len(student.mistakes) for student in cohort)  # some right answers differ
    mistakes = sorted(len(s.mistakes) for s in cohort)
    assert mistakes[0] < mistakes[-1]  # stronger and weaker students


def test_classmates_who_work_alone_never_hand_in_the_same_control_or_alternative(cohort):
    honest = [s for s in cohort if not s.copied_from]
    held = Counter(a.name for s in honest for a in s.answers)
    assert max(held.values()) == 1


def test_a_couple_of_functions_are_wrong_for_most_of_the_class(cohort):
    wrong = Counter((a.notebook, a.function) for s in cohort for a in s.mistakes)
    assert sum(count > len(cohort) / 2 for count in wrong.values()) >= 1


def test_one_late_one_broken_one_copy_and_some_blank_written_answers(manifest, cohort):
    late = [s for s in cohort if s.late]
    assert [s.minutes_after_due for s in late] == [MINUTES_LATE]
    broken = [s for s in cohort if s.broken]
    assert len(broken) == 1 and broken[0].broken[0] in {e.name for e in manifest.notebooks} - {WRITTEN_NOTEBOOK}
    copiers = [s for s in cohort if s.copied_from]
    assert len(copiers) == 1
    copier = copiers[0]
    source = next(s for s in cohort if s.student_id == copier.copied_from)
    (notebook,) = copier.copied
    assert copier.answers_of(notebook) == source.answers_of(notebook)
    assert [cell for cell, _ in copier.written] == [cell for cell, _ in source.written]
    for (_, copied), (_, original) in zip(copier.written, source.written):
        assert copied != original and len(runs(copied) & runs(original)) > 0.8 * len(runs(original))
    assert len({copier, source, *late, *broken}) == 4  # four different students
    assert any(not s.written for s in cohort)


def test_written_answers_are_plausible_texts_one_per_student(cohort):
    writers = [s for s in cohort if s.written and not s.copied_from]
    assert len(writers) >= 3
    for cell, pool in WRITTEN_POOLS.items():
        texts = [text for s in writers for c, text in s.written if c == cell]
        assert set(texts) <= set(pool) and len(texts) == len(set(texts))


def test_a_submission_holds_every_notebook_its_written_answers_and_its_hand_in_time(manifest, cohort, course, tmp_path):
    due = due_date(datetime.datetime(2026, 3, 4, 15, 30, tzinfo=datetime.timezone.utc))
    assert due == datetime.datetime(2026, 3, 4, 9, 0)
    late = next(s for s in cohort if s.late)
    broken = next(s for s in cohort if s.broken)
    for student in (late, broken):
        folder = write_demo_student(_with_release(course, tmp_path), manifest, student, due)
        names = sorted(p.stem for p in folder.glob("*.ipynb"))
        assert names == sorted(e.name for e in manifest.notebooks)
        stamped = (folder / TIMESTAMP).read_text()
        handed_in = due + datetime.timedelta(minutes=student.minutes_after_due)
        assert stamped.startswith(handed_in.strftime("%Y-%m-%d %H:%M:%S"))
        for name in names:
            if name in student.broken:
                with pytest.raises(json.JSONDecodeError):
                    json.loads((folder / f"{name}.ipynb").read_text())
                continue
            notebook = nbformat.read(folder / f"{name}.ipynb", as_version=4)
            if name == WRITTEN_NOTEBOOK:
                cells = cells_by_grade_id(notebook)
                for cell, text in student.written:
                    assert cells[cell].source == text
        intake = take_in(folder, course.release_dir)
        assert intake.problem is None
        assert sorted(n for n, _ in intake.notebooks) == [n for n in names if n not in student.broken]


def _with_release(course, tmp_path):
    """A scratch course whose submissions are built from the committed release."""
    scratch = course.at(tmp_path / "course")
    release = scratch.release_dir
    release.parent.mkdir(parents=True, exist_ok=True)
    if not release.exists():
        release.symlink_to(course.release_dir, target_is_directory=True)
    return scratch
