from pathlib import Path

import pytest

from gradekit.core.manifest import load_manifest
from gradekit.core.notebook_script import ScriptError

pytestmark = pytest.mark.unit


def test_manifest_lists_notebooks_in_lesson_order(manifest):
    names = [entry.name for entry in manifest.notebooks]
    assert names == sorted(names)
    assert names[0] == "010_history"
    assert manifest.assignment == "autograd"


def test_every_notebook_has_graded_exercises_with_points(manifest):
    for entry in manifest.notebooks:
        exercises = manifest.exercises_of(entry.name)
        assert exercises, f"{entry.name} has no exercise"
        assert len(exercises) >= 2, f"{entry.name} needs at least two exercises"
        for exercise in exercises:
            assert exercise.functions and exercise.tests
            assert all(test.points > 0 for test in exercise.tests)


def test_cell_ids_are_unique_across_the_assignment(manifest):
    ids = [e.answer_cell for e in manifest.exercises] + [t.cell for e in manifest.exercises for t in e.tests]
    assert len(ids) == len(set(ids))


def test_narrowing_keeps_only_the_named_notebooks(manifest):
    narrow = manifest.only(["010_history"])
    assert [n.name for n in narrow.notebooks] == ["010_history"]
    assert {e.notebook for e in narrow.exercises} == {"010_history"}
    with pytest.raises(KeyError):
        manifest.only(["999_missing"])


SCRIPT = """# %% [markdown] md_f
# Write f.

# %% answer answer_f
from solutions.reference.history import float64_leaf, square_sum_grad

# %% test test_f points=2 targets=some-named-mistake
pass

# %% test test_f_more points=1.5
pass

# %% [markdown] task task_explain points=0
# Explain.

# %% [markdown] answer answer_explain points=3
# YOUR ANSWER HERE
"""


def _course_files(tmp_path, notebook_entry: str) -> Path:
    path = tmp_path / "manifest.toml"
    path.write_text(notebook_entry)
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "010_a.py").write_text(SCRIPT)
    return path


def test_exercises_points_targets_and_written_answers_come_from_the_script(tmp_path):
    path = _course_files(tmp_path, '[[notebook]]\nname = "010_a"\nsection = "1"\ntitle = "A"\n')
    manifest = load_manifest(path, assignment="a")
    (entry,) = manifest.notebooks
    assert (entry.reference, entry.controls) == ("solutions.reference.history", "solutions.controls.history")
    (exercise,) = manifest.exercises
    assert (exercise.answer_cell, exercise.functions) == ("answer_f", ("float64_leaf", "square_sum_grad"))
    assert [(t.cell, t.points, t.targets) for t in exercise.tests] == [
        ("test_f", 2.0, ("some-named-mistake",)),
        ("test_f_more", 1.5, ()),
    ]
    assert manifest.points_of("010_a") == 3.5
    (written,) = manifest.manual
    assert (written.answer_cell, written.task_cell, written.points) == ("answer_explain", "task_explain", 3.0)


def test_a_manifest_entry_repeating_what_the_script_says_is_refused(tmp_path):
    path = _course_files(tmp_path, '[[notebook]]\nname = "010_a"\nsection = "1"\ntitle = "A"\nreference = "r"\n')
    with pytest.raises(ValueError, match="reference"):
        load_manifest(path, assignment="a")


def test_a_test_cell_before_any_answer_is_refused(tmp_path):
    path = _course_files(tmp_path, '[[notebook]]\nname = "010_a"\nsection = "1"\ntitle = "A"\n')
    (tmp_path / "notebooks" / "010_a.py").write_text("# %% test test_early points=2\npass\n\n" + SCRIPT)
    with pytest.raises(ScriptError, match="before any answer"):
        load_manifest(path, assignment="a")
