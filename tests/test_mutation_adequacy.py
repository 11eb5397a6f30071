"""The mutation bar: every notebook's hidden tests kill at least 95% of the mutants that are not equivalent.

Every mutant of every reference function runs in process (as `gradekit check`
runs the controls); a survivor must be reviewed in
solutions/equivalent_mutants.toml, and a review must still name a survivor.
"""

import pytest

from gradekit.mutation.adequacy import measure_adequacy
from gradekit.mutation.equivalents import REQUIRED_SCORE

pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def adequacy(course, manifest):
    return measure_adequacy(course, manifest)


def test_every_survivor_is_reviewed_and_every_notebook_clears_the_bar(adequacy):
    assert list(adequacy.problems) == []
    assert all(score.score >= REQUIRED_SCORE for score in adequacy.scores)


def test_every_exercise_function_has_mutants_and_the_lesson_operators_fire(adequacy, manifest):
    mutated = {(r.mutant.notebook, r.mutant.function) for r in adequacy.results}
    for entry in manifest.notebooks:
        for exercise in manifest.exercises_of(entry.name):
            assert {(entry.name, f) for f in exercise.functions} <= mutated
    operators = {r.mutant.operator for r in adequacy.results}
    assert {"precision", "requires-grad", "grad-mode-dropped", "in-place", "identity", "finite-infinity"} <= operators


def test_a_mutants_run_stops_at_the_first_cell_that_kills_it(adequacy):
    killed = [r for r in adequacy.results if r.killed_by]
    assert killed and all(len(r.killed_by) == 1 for r in killed)
