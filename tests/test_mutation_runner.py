"""A mutant is graded in process: killed by the cell that catches it, or by its time limit, and either way
the run leaves the process as it found it."""

import sys

import pytest
import torch

from gradekit.authoring.checks_in_process import NOTEBOOK_MODULE
from gradekit.mutation.mutants import Mutant
from gradekit.mutation.runner import grade_mutants

pytestmark = pytest.mark.unit

NOTEBOOK, FUNCTION = "010_history", "float64_leaf"


def mutant(name, body):
    source = f"def {FUNCTION}(*args, **kwargs):\n{body}"
    return Mutant(f"{NOTEBOOK}/{name}", NOTEBOOK, FUNCTION, "by hand", source, "")


def test_a_mutant_that_never_returns_is_ended_by_its_time_limit_and_nothing_of_its_run_stays(course, manifest):
    dtype = torch.get_default_dtype()
    spins = mutant(
        "spins",
        "    __import__('torch').set_default_dtype(__import__('torch').float64)\n    while True:\n        pass\n",
    )
    wrong = mutant("wrong", "    return None\n")
    spun, caught = grade_mutants(course, manifest, (spins, wrong), time_limit=1.0)
    assert spun.timed_out and spun.killed and spun.killed_by == ()
    assert caught.killed and not caught.timed_out and len(caught.killed_by) == 1  # the first cell to catch it
    assert torch.get_default_dtype() == dtype and NOTEBOOK_MODULE not in sys.modules
