import pytest

from gradekit.manifest import load_manifest

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


def test_manifest_reads_points_and_targets_from_the_scripts(tmp_path):
    path = tmp_path / "manifest.toml"
    path.write_text(
        'assignment = "a"\n'
        '[[notebook]]\nname = "020_b"\nsection = "2"\ntitle = "B"\nreference = "r.b"\ncontrols = "c.b"\n'
        '[[notebook]]\nname = "010_a"\nsection = "1"\ntitle = "A"\nreference = "r.a"\ncontrols = "c.a"\n'
        '[[exercise]]\nnotebook = "010_a"\nanswer_cell = "answer_f"\nfunctions = ["f"]\n'
        'tests = [{ cell = "test_f", points = 2 }]\n'
    )
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "010_a.py").write_text("# %% test test_f points=2 targets=some-named-mistake\npass\n")
    (tmp_path / "notebooks" / "020_b.py").write_text("# %% setup\nimport math\n")
    manifest = load_manifest(path)
    assert [n.name for n in manifest.notebooks] == ["010_a", "020_b"]
    (test,) = manifest.test_cells_of("010_a")
    assert (test.cell, test.points, test.targets) == ("test_f", 2.0, ("some-named-mistake",))
    assert manifest.points_of("010_a") == 2.0
    assert manifest.exercise_defining("010_a", "f").answer_cell == "answer_f"
