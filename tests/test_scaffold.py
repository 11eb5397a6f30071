"""`gradekit new-exercise`: the skeleton lands in every file, and every placeholder fails until written."""

import shutil
import subprocess
import sys
import tomllib

import pytest

from gradekit.authoring.scaffold import add_exercise, exercise_files, misconception_id, next_exercise_number
from gradekit.core.course import REPO_ROOT
from gradekit.core.manifest import load_manifest
from gradekit.core.notebook_script import Role, read_script


@pytest.fixture
def solutions_copy(tmp_path):
    copy = tmp_path / "solutions"
    shutil.copytree(REPO_ROOT / "solutions", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.mark.unit
def test_the_skeleton_reaches_reference_script_catalog_and_controls(solutions_copy):
    manifest = load_manifest(solutions_copy / "manifest.toml", assignment="autograd")
    files = exercise_files(manifest, "010_history", solutions_copy)
    changed = add_exercise(files, "solutions.reference.history", "leaf_count", points=2)
    assert changed == [files[part] for part in ("reference", "script", "catalog", "controls")]

    grown = load_manifest(solutions_copy / "manifest.toml", assignment="autograd")
    exercise = grown.exercise_defining("010_history", "leaf_count")
    (test,) = exercise.tests
    assert (exercise.answer_cell, test.cell, test.points) == ("answer_leaf_count", "test_leaf_count", 2.0)
    assert test.targets == (misconception_id("leaf_count"),)
    # The new cells come after the last test cell and before the closing text.
    roles = [(cell.role, cell.grade_id) for cell in read_script(files["script"])]
    assert roles[-2] == (Role.TEST, "test_leaf_count") and roles[-1][0] is Role.LESSON

    catalog = tomllib.loads(files["catalog"].read_text())["misconception"]
    assert catalog[-1]["id"] == misconception_id("leaf_count")
    assert "def leaf_count(x):" in files["reference"].read_text()
    assert "def leaf_count__todo(x):" in files["controls"].read_text()
    compile(files["controls"].read_text(), str(files["controls"]), "exec")


@pytest.mark.unit
def test_the_skeleton_continues_the_numbering_and_shows_where_tensors_are_built(solutions_copy):
    manifest = load_manifest(solutions_copy / "manifest.toml", assignment="autograd")
    files = exercise_files(manifest, "010_history", solutions_copy)
    highest = next_exercise_number(files["script"].read_text()) - 1
    assert highest >= 3  # 010 has three exercises today
    add_exercise(files, "solutions.reference.history", "leaf_count", points=2)
    text = files["script"].read_text()
    assert f"# ### Exercise {highest + 1} (2 points)" in text
    assert "in_kernel(checks." in text  # a test built on the grader's side is the course lead's first trap
    assert next_exercise_number("no exercise yet") == 1


@pytest.mark.unit
def test_an_exercise_cannot_be_added_twice_or_under_a_bad_name(solutions_copy):
    manifest = load_manifest(solutions_copy / "manifest.toml", assignment="autograd")
    files = exercise_files(manifest, "010_history", solutions_copy)
    with pytest.raises(ValueError, match="already has"):
        add_exercise(files, "solutions.reference.history", "float64_leaf")
    with pytest.raises(ValueError, match="plain function name"):
        add_exercise(files, "solutions.reference.history", "two__parts")


@pytest.mark.notebook
def test_check_reports_the_scaffold_until_it_is_written(tmp_path):
    """In a copy of the repository: the command scaffolds and renders, and `check` fails on each placeholder."""
    copy = tmp_path / "repo"
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    copy.mkdir()
    subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True)
    for changed in ("gradekit", "solutions", "source"):  # the working tree's version, committed or not
        shutil.rmtree(copy / changed)
        shutil.copytree(REPO_ROOT / changed, copy / changed, ignore=shutil.ignore_patterns("__pycache__"))
    run = lambda *args: subprocess.run(
        [sys.executable, "-m", "gradekit", *args], cwd=copy, capture_output=True, text=True
    )
    scaffolded = run("new-exercise", "010_history", "leaf_count")
    assert scaffolded.returncode == 0, scaffolded.stderr
    assert "answer_leaf_count" in (copy / "source" / "autograd" / "010_history.ipynb").read_text()
    assert "python -m gradekit sync" in scaffolded.stdout
    script = copy / "solutions" / "notebooks" / "010_history.py"
    script.write_text(script.read_text() + "\n# %% [markdown] more\n# One more paragraph.\n")
    stale = run("check", "--notebook", "010_history")
    assert stale.returncode == 1
    assert "010_history.ipynb differs from its script; run `python -m gradekit sync`" in stale.stderr
    assert "holds" not in stale.stdout and "hold in process" not in stale.stdout
    assert run("sync").returncode == 0
    checked = run("check", "--notebook", "010_history")
    assert checked.returncode == 1
    assert "reference @ 010_history/test_leaf_count: the reference must earn full marks" in checked.stdout
    assert f"must name {misconception_id('leaf_count')}, named nothing" in checked.stdout
