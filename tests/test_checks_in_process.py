import pytest
import torch

from gradekit.authoring.checks_in_process import load_support_modules, run_checks
from gradekit.core.notebook_script import parse_script

pytestmark = pytest.mark.unit

SCRIPT = """# %% setup
import sys
import warnings

from autograd_checks import call_answer, expect

# %% answer answer_f
from solutions.reference.history import float64_leaf

# %% test test_named points=2
expect(call_answer(f) == 1, "f must return 1", "some-wrong-idea")

# %% test test_stderr points=1
print("noise", file=sys.stderr)

# %% test test_warning points=1
warnings.warn("a warning a kernel would print")

# %% test test_quiet points=1
call_answer(lambda: warnings.warn("recorded by the checks, not printed"))
"""


@pytest.fixture(scope="module", autouse=True)
def support_modules(course):
    load_support_modules(course.source_dir)


def _outcomes(answer):
    return {o.cell: o for o in run_checks(parse_script(SCRIPT), {"answer_f": answer})}


def test_a_passing_cell_and_a_diagnosis_naming_its_misconception():
    assert _outcomes("def f():\n    return 1")["test_named"].passed
    failed = _outcomes("def f():\n    return 2")["test_named"]
    assert not failed.passed and failed.named == ("some-wrong-idea",)
    assert "f must return 1" in failed.failure


def test_stderr_and_printed_warnings_fail_a_test_cell_but_recorded_warnings_do_not():
    outcomes = _outcomes("def f():\n    return 1")
    assert not outcomes["test_stderr"].passed and "noise" in outcomes["test_stderr"].failure
    assert not outcomes["test_warning"].passed and "UserWarning" in outcomes["test_warning"].failure
    assert outcomes["test_quiet"].passed


def test_an_answer_cell_that_fails_does_not_stop_the_run_and_torch_settings_come_back():
    grad_mode, dtype = torch.is_grad_enabled(), torch.get_default_dtype()
    outcomes = _outcomes("torch_off = __import__('torch').set_grad_enabled(False)\nraise RuntimeError('broken cell')")
    assert not outcomes["test_named"].passed and "NameError" in outcomes["test_named"].failure
    assert outcomes["test_quiet"].passed
    assert (torch.is_grad_enabled(), torch.get_default_dtype()) == (grad_mode, dtype)
