"""How a notebook's findings are judged: the grader's own, and the guard's log read record by record, with no kernel."""

import json
import os

import pytest

from gradekit.core.failures import GraderCause
from gradekit.core.notes import FindingKind
from gradekit.grading.notebook_findings import NotebookFindings
from gradekit.grading.run_sink import RunSink

pytestmark = pytest.mark.unit

NOTEBOOK = "010_history"


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "kit-guard.jsonl"
    path.touch()
    return path


def _ours(log) -> list[int]:
    info = os.stat(log)
    return [info.st_dev, info.st_ino]


def _write(log, *records) -> None:
    with log.open("a") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)


def _watched(log, sink=None):
    findings = NotebookFindings(NOTEBOOK, sink or RunSink())
    findings.watch_log(log)
    return findings


def _kinds(judged) -> list[FindingKind]:
    return [finding.kind for finding in judged]


def test_an_armed_guard_that_answered_every_probe_leaves_no_finding_and_its_log_is_removed(log):
    findings = _watched(log)
    nonce = findings.new_probe("test_chain")
    _write(log, {"armed": True, "log": _ours(log)}, {"probe": nonce, "refusals": 0, "log": _ours(log)})
    assert findings.judged(stopped=False) == ()
    assert not log.exists()


def test_what_the_guard_refused_and_saw_becomes_a_finding_after_the_cell_it_followed(log):
    findings = _watched(log)
    nonce = findings.new_probe("test_chain")
    _write(
        log,
        {"armed": True, "log": _ours(log)},
        {"refused": "open", "reason": "a course file"},
        {"probe": nonce, "refusals": 1, "findings": ["torch.allclose was replaced"], "log": _ours(log)},
    )
    refused, saw = findings.judged(stopped=False)
    assert (refused.kind, refused.detail, refused.items) == (FindingKind.ANSWER_REFUSED, "a course file", ("open",))
    assert (saw.kind, saw.detail, saw.items) == (FindingKind.GUARD_SAW, "torch.allclose was replaced", ("test_chain",))


def test_an_answer_that_names_another_file_is_a_tampered_log(log):
    findings = _watched(log)
    _write(log, {"armed": True, "log": [0, 0]})
    (tampered,) = findings.judged(stopped=False)
    assert tampered.kind is FindingKind.LOG_TAMPERED and tampered.detail == "holds an answer that names another file"


def test_a_probe_left_unanswered_is_a_finding_unless_the_kernel_stopped(log):
    for stopped, expected in ((False, [FindingKind.PROBE_UNANSWERED]), (True, [])):
        _write(log, {"armed": True, "log": _ours(log)})
        findings = _watched(log)
        findings.new_probe("test_chain")
        assert _kinds(findings.judged(stopped=stopped)) == expected
        log.touch()


def test_refusals_the_guard_counted_but_did_not_log_are_lost_records(log):
    findings = _watched(log)
    nonce = findings.new_probe("test_chain")
    _write(log, {"armed": True, "log": _ours(log)}, {"probe": nonce, "refusals": 2, "log": _ours(log)})
    assert _kinds(findings.judged(stopped=False)) == [FindingKind.LOG_LOST_RECORDS]


def test_a_guard_never_armed_is_the_students_when_a_stranger_wrote_in_its_log(log):
    sink = RunSink()
    findings = _watched(log, sink)
    nonce = findings.new_probe("test_chain")
    _write(log, {"written by": "the student"}, {"probe": nonce, "log": _ours(log)})
    assert _kinds(findings.judged(stopped=False)) == [FindingKind.FOREIGN_LOG_LINE, FindingKind.GUARD_NEVER_ARMED]
    assert sink.noticed == []


def test_a_guard_never_armed_with_a_clean_log_is_the_graders_failure(log):
    sink = RunSink()
    findings = _watched(log, sink)
    nonce = findings.new_probe("test_chain")
    _write(log, {"probe": nonce, "log": _ours(log)})
    assert findings.judged(stopped=False) == ()
    assert [failure.cause for failure in sink.noticed] == [GraderCause.GUARD_NOT_ARMED]


def test_an_unreadable_reply_alone_is_the_graders_and_beside_tampering_the_students(log):
    sink = RunSink()
    _write(log, {"armed": True, "log": _ours(log)})
    alone = _watched(log, sink)
    alone.notice(FindingKind.UNREADABLE_ANSWER, "no answer", "test_chain")
    assert _kinds(alone.judged(stopped=False)) == [FindingKind.UNREADABLE_ANSWER]
    assert [failure.cause for failure in sink.noticed] == [GraderCause.REPLY_UNREADABLE]
    sink.clear()
    log.touch()  # judging removed the last log
    _write(log, {"armed": True, "log": _ours(log)})
    beside = _watched(log, sink)
    beside.notice(FindingKind.UNREADABLE_ANSWER, "no answer", "test_chain")
    beside.notice(FindingKind.FORGED_FACT, "a hook called outside backward", "test_chain")
    assert len(beside.judged(stopped=False)) == 2 and sink.noticed == []


def test_a_finding_noticed_twice_is_kept_once_without_a_guard_log():
    findings = NotebookFindings(NOTEBOOK, RunSink())
    for _ in range(2):
        findings.notice(FindingKind.HIDDEN_CODE_SHOWN, "", "test_chain")
    (shown,) = findings.judged(stopped=False)
    assert shown.text.startswith(f"{NOTEBOOK}: ")
