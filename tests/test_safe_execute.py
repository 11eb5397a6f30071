"""The Execute step that keeps the kernel: its time limits against a starved kernel, its watchdog, a killed kernel's reason."""

import time

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook
from test_time_limits import cpu_hogs

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading import safe_execute
from gradekit.grading.output_limits import CUT_BY_THE_GRADER, LimitOutputSize, output_bytes
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


# A cell that finishes at once but leaves outputs behind it, which a slowed grader reads one by one.
TRAILING_OUTPUTS = 6
GRADER_SECONDS_PER_OUTPUT = 0.4
QUIET_SECONDS = 1  # nbclient's wait for the last outputs, shortened: the outputs take longer than it in all


def _with_trailing_outputs(tmp_path):
    displays = f"for n in range({TRAILING_OUTPUTS}):\n    display(n)"
    notebook = new_notebook(cells=[new_code_cell(displays), new_code_cell("print('the next cell ran')")])
    nbformat.write(notebook, tmp_path / "trailing.ipynb")
    return notebook, {"metadata": {"path": str(tmp_path)}, "unique_key": "trailing"}


def _slow_grader(monkeypatch):
    """The grader's reading of each output slowed, as a loaded machine slows its decoding of large ones."""
    output = SafeExecute.output

    def slowly(self, *args, **kwargs):
        time.sleep(GRADER_SECONDS_PER_OUTPUT)
        return output(self, *args, **kwargs)

    monkeypatch.setattr(SafeExecute, "output", slowly)


@pytest.mark.notebook
def test_outputs_a_slow_grader_is_still_reading_after_the_reply_cost_the_cell_nothing(tmp_path, monkeypatch):
    assert TRAILING_OUTPUTS * GRADER_SECONDS_PER_OUTPUT > 2 * QUIET_SECONDS > 2 * GRADER_SECONDS_PER_OUTPUT
    _slow_grader(monkeypatch)
    notebook, resources = _with_trailing_outputs(tmp_path)
    executed, _ = SafeExecute(timeout=10, iopub_timeout=QUIET_SECONDS).preprocess(notebook, resources)
    shown, after = executed.cells
    assert [o.output_type for o in shown.outputs] == ["display_data"] * TRAILING_OUTPUTS
    assert [o.get("text") for o in after.outputs] == ["the next cell ran\n"]


@pytest.mark.notebook
def test_a_kernel_that_never_says_it_is_idle_is_still_ended_once_silent(tmp_path, monkeypatch):
    """The last word of a cell's stream lost: the silence that follows ends the cell, as nbclient's wait did."""
    process = NotebookClient.process_message

    def deaf_to_idle(self, msg, cell, cell_index):
        if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
            return None
        return process(self, msg, cell, cell_index)

    monkeypatch.setattr(NotebookClient, "process_message", deaf_to_idle)
    notebook, resources = _with_trailing_outputs(tmp_path)
    executed, _ = SafeExecute(timeout=10, iopub_timeout=QUIET_SECONDS).preprocess(notebook, resources)
    shown, after = executed.cells
    assert "ignored the interrupt" in shown.outputs[-1].evalue
    assert after.outputs[-1].ename == "NotRun"


# Code the kernel runs after its reply and before it says it is idle (a hook of its own), printing all along.
AFTER_THE_REPLY = """
import time
_kernel = get_ipython().kernel

def _after_the_reply():
    del _kernel.post_handler_hook
    type(_kernel).post_handler_hook(_kernel)
    started = time.monotonic()
    while time.monotonic() - started < 120:
        {step}
        print(".", flush=True)

_kernel.post_handler_hook = _after_the_reply
"""


@pytest.mark.notebook
@pytest.mark.parametrize(
    "step", ["sum(range(200_000))", f"time.sleep({QUIET_SECONDS / 2})"], ids=["computes", "trickles-while-sleeping"]
)
def test_a_kernel_running_on_after_its_reply_gets_no_more_than_the_quiet_time(tmp_path, step):
    """Its reply sent, a cell that computes or sleeps between prints is ended by its CPU or its silence."""
    cells = [new_code_cell(AFTER_THE_REPLY.format(step=step)), new_code_cell("print('the next cell ran')")]
    resources = {"metadata": {"path": str(tmp_path)}, "unique_key": "after"}
    executed, _ = SafeExecute(timeout=10, iopub_timeout=QUIET_SECONDS).preprocess(new_notebook(cells=cells), resources)
    shown, after = executed.cells
    assert "ignored the interrupt" in shown.outputs[-1].evalue
    assert after.outputs[-1].ename == "NotRun"


SHOWN_TIMES, UPDATE_CHARACTERS = 40, 400_000  # forty copies of the update: twice the notebook's budget
SHOWN_THEN_UPDATED = f"""
from IPython.display import display, update_display
for _ in range({SHOWN_TIMES}):
    display({{"text/plain": "small"}}, raw=True, display_id="same")
update_display({{"text/plain": "u" * {UPDATE_CHARACTERS}}}, raw=True, display_id="same")
"""


@pytest.mark.notebook
def test_an_update_shown_under_one_id_many_times_is_held_to_the_budget_once_for_each_copy(tmp_path):
    budget = LimitOutputSize().max_notebook_bytes
    assert SHOWN_TIMES * UPDATE_CHARACTERS > budget > UPDATE_CHARACTERS
    notebook = new_notebook(cells=[new_code_cell(SHOWN_THEN_UPDATED)])
    resources = {"metadata": {"path": str(tmp_path)}, "unique_key": "updated"}
    executed, _ = SafeExecute(timeout=10).preprocess(notebook, resources)
    (shown,) = executed.cells
    assert len(shown.outputs) == SHOWN_TIMES
    assert sum(output_bytes(output) for output in shown.outputs) < budget
    assert all(CUT_BY_THE_GRADER in output.data["text/plain"] for output in shown.outputs)
