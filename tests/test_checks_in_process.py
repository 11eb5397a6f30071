import contextlib
import sys

import pytest
import torch

from gradekit.authoring.checks_in_process import NOTEBOOK_MODULE, load_support_modules, run_checks
from gradekit.core.notebook_script import parse_script

pytestmark = pytest.mark.unit

SCRIPT = """# %% setup
import sys
import warnings

import functools

import torch

import autograd_checks as checks
from autograd_checks import call_answer, expect, in_kernel

# %% answer answer_f
from solutions.reference.history import float64_leaf

# %% test test_named points=2
expect(call_answer(f) == 1, "f must return 1", "some-wrong-idea")

# %% test test_stderr points=1
print("noise", file=sys.stderr)

# %% test test_warning points=1
warnings.warn("a warning a kernel would print")

# %% test test_quiet points=1
call_answer(torch.tensor, torch.ones(2))  # torch warns that a tensor is copy-constructed: recorded, not printed

# %% test test_sends_its_own_function points=1
in_kernel(lambda t: t * 2, torch.ones(2))

# %% test test_sends_a_partial_of_its_own_function points=1
def doubled(t):
    return t * 2


call_answer(f, functools.partial(doubled))

# %% test test_sends_public_functions_and_what_the_student_side_made points=1
clock, slow_first_call = in_kernel(checks.manual_clock, [])
in_kernel(slow_first_call, torch.ones(1))
call_answer(f, functools.partial(checks.noting_calls, checks.sum_of_squares, []))
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


def test_a_run_told_where_to_stop_runs_no_cell_after_the_first_outcome_it_accepts():
    script = parse_script(SCRIPT)
    whole = run_checks(script, {"answer_f": "def f():\n    return 2"})
    stopped = run_checks(script, {"answer_f": "def f():\n    return 2"}, stop_after=lambda o: o.cell == "test_stderr")
    assert [o.cell for o in stopped] == ["test_named", "test_stderr"]
    assert stopped == whole[:2]
    assert run_checks(script, {"answer_f": "def f():\n    return 1"}, stop_after=lambda o: False) == run_checks(
        script, {"answer_f": "def f():\n    return 1"}
    )


def test_the_context_the_cells_run_in_is_left_before_the_run_puts_its_state_back_even_when_it_raises():
    class OutOfTime(BaseException):
        """As the mutation runner's alarm raises it, when the limit falls as the last cell ends."""

    dtype, inside = torch.get_default_dtype(), []

    @contextlib.contextmanager
    def out_of_time_as_the_cells_end():
        yield
        inside.append(torch.get_default_dtype())
        raise OutOfTime()

    wide = "__import__('torch').set_default_dtype(__import__('torch').float64)"
    with pytest.raises(OutOfTime):
        run_checks(parse_script(SCRIPT), {"answer_f": wide}, cells_within=out_of_time_as_the_cells_end)
    assert inside == [torch.float64]  # every cell ran within it, the answer's setting still in force
    assert torch.get_default_dtype() == dtype and NOTEBOOK_MODULE not in sys.modules  # then all was put back


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


def test_a_function_of_the_test_is_refused_as_the_wire_would_and_public_ones_pass():
    outcomes = _outcomes("def f(*args):\n    return 1")
    for cell, name in (
        ("test_sends_its_own_function", "<lambda>"),
        ("test_sends_a_partial_of_its_own_function", "doubled"),
    ):
        assert not outcomes[cell].passed
        assert f"the test's function '{name}' cannot reach the student's kernel" in outcomes[cell].failure
    assert outcomes["test_sends_public_functions_and_what_the_student_side_made"].passed


def test_every_call_to_the_student_side_is_shown_to_a_watcher_with_its_cell():
    seen = []
    run_checks(
        parse_script(SCRIPT),
        {"answer_f": "def f(*args):\n    return 1"},
        on_call=lambda cell, function, args, kwargs: seen.append((cell, getattr(function, "__name__", ""), args)),
    )
    quiet = [(cell, name) for cell, name, _ in seen if cell == "test_quiet"]
    assert quiet == [("test_quiet", "tensor")]
    assert ("test_named", "f", ()) in seen
