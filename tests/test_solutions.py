import subprocess
import sys

import pytest

from gradekit.authoring.solutions import load_controls, reference_function
from gradekit.core.course import REPO_ROOT
from gradekit.core.nbgrader_cli import grading_environment


@pytest.mark.unit
def test_every_control_rewrites_a_function_of_its_notebook(manifest):
    controls = load_controls(manifest)
    assert controls
    names = [c.name for c in controls]
    assert len(names) == len(set(names))
    for control in controls:
        exercise = manifest.exercise_defining(control.notebook, control.function)
        definition = next(line for line in control.source.splitlines() if not line.startswith("@"))
        assert definition.startswith(f"def {control.function}(")  # below the answer's own decorators, if any
        assert control.fails or control.is_alternative, f"{control.name} declares no cell it must fail"
        assert not (control.fails and control.is_alternative)
        assert set(control.fails) <= {t.cell for t in manifest.test_cells_of(control.notebook)}
        assert exercise.answer_cell


@pytest.mark.unit
def test_alternatives_follow_their_notebooks_controls_and_fail_nothing(manifest):
    controls = load_controls(manifest)
    alternatives = [c for c in controls if c.is_alternative]
    assert alternatives, "every course keeps correct alternatives beside its negative controls"
    for notebook in {c.notebook for c in alternatives}:
        kinds = [c.is_alternative for c in controls if c.notebook == notebook]
        assert kinds == sorted(kinds), f"{notebook}: alternatives come after the negative controls"
    assert all(c.student_id.startswith("alternative-") for c in alternatives)


@pytest.mark.unit
def test_every_manifest_function_has_a_reference(manifest):
    for exercise in manifest.exercises:
        for name in exercise.functions:
            assert callable(reference_function(manifest, exercise.notebook, name))


@pytest.mark.nbgrader
def test_reference_refuses_to_import_inside_nbgrader():
    env = dict(grading_environment(), NBGRADER_EXECUTION="autograde")
    result = subprocess.run(
        [sys.executable, "-c", "import solutions.reference.history"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "not available to graded notebooks" in result.stderr
