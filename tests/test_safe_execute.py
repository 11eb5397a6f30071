"""The Execute step that keeps the kernel: its time limits against a starved kernel, its watchdog, a killed kernel's reason."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from test_time_limits import cpu_hogs

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading import safe_execute
from gradekit.grading.safe_execute import SafeExecute
from gradekit.grading.sealed_checks import KernelStopped


@pytest.mark.unit
def test_a_call_may_make_no_progress_past_the_cells_backstop_and_the_interrupts_grace():
    backstop = safe_execute.WATCHDOG_FACTOR * 10 + safe_execute.INTERRUPT_GRACE_SECONDS + safe_execute.WATCHDOG_SLACK
    assert SafeExecute(timeout=10).watchdog_seconds() == backstop
    assert SafeExecute(timeout=None).watchdog_seconds() > safe_execute.DEFAULT_CELL_SECONDS * 3


@pytest.mark.unit
def test_after_the_grader_killed_the_kernel_every_later_call_gets_the_same_reason():
    step = SafeExecute(timeout=1)
    step._killed_because = None
    step.refuse_if_killed()  # nothing killed yet: the call goes ahead
    step._killed_because = step._past_limit("ignored the interrupt")
    with pytest.raises(KernelStopped, match="ran past the 1 s limit and ignored the interrupt"):
        step.refuse_if_killed()


@pytest.mark.alone  # it loads every core on purpose
@pytest.mark.notebook
def test_a_kernel_starved_past_the_backstop_is_the_graders_failure(tmp_path):
    """Spinning, but given too little CPU to reach its limit before the backstop: retried, never scored."""
    notebook = new_notebook(cells=[new_code_cell("while True:\n    pass"), new_code_cell("print('never run')")])
    nbformat.write(notebook, tmp_path / "starved.ipynb")
    resources = {"metadata": {"path": str(tmp_path)}, "unique_key": "starved"}
    with cpu_hogs(own_sessions=True), pytest.raises(GraderFailure) as failure:
        SafeExecute(timeout=1).preprocess(notebook, resources)
    assert failure.value.cause is GraderCause.OVERLOADED
    assert "waited" in failure.value.detail and "for a CPU" in failure.value.detail
