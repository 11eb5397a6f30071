"""nbgrader's gradebook steps run as nbconvert would build them, inside the clock's gradebook phase."""

import copy

import pytest
from nbconvert.preprocessors import ClearMetadataPreprocessor, Preprocessor
from nbgrader.preprocessors import AssignLatePenalties, Execute, SaveAutoGrades
from traitlets import Unicode
from traitlets.config import Config

from gradekit.grading.phase_clock import Phase, PhaseClock
from gradekit.grading.preprocessors import GradeMarkSchemes
from gradekit.grading.timed_steps import TimedStep, timed_gradebook_steps

pytestmark = pytest.mark.unit


class Inside(Preprocessor):
    """A step that says what its configuration held and which phase the clock was in while it ran."""

    said = Unicode("").tag(config=True)

    def preprocess(self, nb, resources):
        resources["ran"] = (self.said, resources["clock"].running)
        return nb, resources


def test_a_timed_step_is_built_from_the_run_s_configuration_and_runs_inside_its_phase():
    config = Config({"Inside": {"said": "configured", "enabled": True}})
    clock = PhaseClock()
    step = TimedStep(Inside, Phase.GRADEBOOK, clock, config)
    _, resources = step({}, {"clock": clock})
    assert resources["ran"] == ("configured", Phase.GRADEBOOK)
    assert Phase.GRADEBOOK in clock.times()


def test_a_copied_pipeline_keeps_the_run_s_clock():
    step = TimedStep(Inside, Phase.GRADEBOOK, PhaseClock(), Config())
    assert copy.deepcopy([step])[0] is step


def test_only_the_steps_that_write_the_gradebook_are_timed():
    steps = [Execute, ClearMetadataPreprocessor, SaveAutoGrades, GradeMarkSchemes, AssignLatePenalties]
    timed = timed_gradebook_steps(steps, PhaseClock(), Config())
    assert timed[:2] == steps[:2]
    assert [(step.step, step.phase) for step in timed[2:]] == [(step, Phase.GRADEBOOK) for step in steps[2:]]
