"""A run's sink: shared by the Execute step through nbgrader's configuration, emptied per run, read by the grader."""

import pytest
from nbformat.v4 import new_notebook
from traitlets.config import Config, Configurable

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading.run_sink import NotebookReport, RunSink
from gradekit.grading.safe_execute import SafeExecute

pytestmark = pytest.mark.unit


def test_the_execute_step_reports_to_the_sink_its_configuration_names():
    sink, config = RunSink(), Config()
    config.SafeExecute.sink = sink
    config.SafeExecute.sealed_sources = {"010_history": new_notebook()}
    step = SafeExecute(parent=Configurable(config=config))  # as nbgrader builds its steps
    assert step.sink is sink
    assert list(step.sealed_sources) == ["010_history"]


def test_a_step_built_alone_keeps_a_sink_of_its_own():
    assert SafeExecute().sink is not SafeExecute().sink


def test_the_first_noticed_failure_is_raised_once():
    sink = RunSink()
    first = sink.notice(GraderFailure(GraderCause.OVERLOADED, "first"))
    sink.notice(GraderFailure(GraderCause.STALLED, "second"))
    with pytest.raises(GraderFailure) as raised:
        sink.raise_noticed(last_attempt=False)
    assert raised.value is first
    sink.raise_noticed(last_attempt=False)  # nothing left: no second raise


def test_on_the_last_try_a_failure_the_submission_can_cause_is_left_to_the_findings():
    sink = RunSink()
    sink.notice(GraderFailure(GraderCause.REPLY_UNREADABLE, "the answer replaced its answering function"))
    sink.raise_noticed(last_attempt=True)
    assert sink.noticed == []


def test_clear_empties_reports_and_failures():
    sink = RunSink()
    sink.report(NotebookReport("010_history"))
    sink.notice(GraderFailure(GraderCause.OVERLOADED, "busy"))
    sink.clear()
    assert (sink.reports, sink.noticed) == ([], [])
