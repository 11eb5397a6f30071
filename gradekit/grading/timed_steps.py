"""nbgrader's steps that write the gradebook, timed as the run's gradebook phase.

nbconvert runs a pipeline entry that is already callable as it is: the scratch
grader lists a `TimedStep` in place of each such step, which builds the step as
nbconvert would (from the run's configuration) and runs it inside the phase.
The step itself is nbgrader's (or the course's), unchanged.
"""

from __future__ import annotations

from typing import Any

from nbgrader.preprocessors import AssignLatePenalties, SaveAutoGrades
from traitlets.config import Config

from gradekit.grading.phase_clock import Phase, PhaseClock

GRADEBOOK_STEP_NAMES = frozenset({SaveAutoGrades.__name__, AssignLatePenalties.__name__, "GradeMarkSchemes"})


class TimedStep:
    """A step of nbgrader's autograde pipeline, run inside `phase` of the run's clock."""

    def __init__(self, step: type, phase: Phase, clock: PhaseClock, config: Config):
        self.step, self.phase, self.clock, self.config = step, phase, clock, config

    def __deepcopy__(self, memo: dict) -> TimedStep:
        # traitlets copies a configured list into the converter it builds: the clock is shared, not copied.
        return self

    def __call__(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        with self.clock.phase(self.phase):
            return self.step(config=self.config)(nb, resources)


def timed_gradebook_steps(steps: list, clock: PhaseClock, config: Config) -> list:
    """`steps` with each step that writes the gradebook timed; the others as they were."""
    return [
        TimedStep(step, Phase.GRADEBOOK, clock, config)
        if isinstance(step, type) and step.__name__ in GRADEBOOK_STEP_NAMES
        else step
        for step in steps
    ]
