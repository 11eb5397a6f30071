"""What one notebook's run shows of tampering: gathered while it runs, judged when it ends.

Two sources feed it. The grader notices some things itself (a hidden test
line cut from an output, a reply it could not read, a test tensor the kernel
tried to change, a fact a check found forged). The kernel's guard
(kernel_guard.py) writes its log: that it was armed, what it refused, and its
answer to each probe the grader sent after a graded cell. At the end the log
is read (guard_log.py reads the file; this module judges what it says) and
the whole is turned into findings, once each, in the order first seen: a log
that is not the guard's own, a guard never armed, records lost, a probe left
unanswered. Two endings belong to the grader rather than the student, and are
noticed on the run's sink instead: a guard that was never armed although
nothing of a stranger is in its log, and an unreadable reply from a live
kernel the guard saw nothing wrong in.
"""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.notes import Finding, FindingKind
from gradekit.grading.guard_log import file_identity, read_log
from gradekit.grading.run_sink import RunSink

# Findings that say nothing of tampering with the kernel's side of the wire.
UNTAMPERED = frozenset({FindingKind.UNREADABLE_ANSWER, FindingKind.HIDDEN_CODE_SHOWN})


@dataclasses.dataclass
class _LogReading:
    """What the guard's log shows as a whole, gathered record by record."""

    tampered: str = ""  # why the log is not the guard's own, or ""
    armed: bool = False
    answered: set[str] = dataclasses.field(default_factory=set)  # probes the guard answered
    refusals_logged: int = 0
    refusals_counted: int = 0  # as the guard's last probe counted them


class NotebookFindings:
    """The findings of one notebook's run, and the probes sent to its kernel's guard."""

    def __init__(self, notebook: str, sink: RunSink):
        self.notebook = notebook
        self._sink = sink
        self._noticed: list[Finding] = []  # what the grader saw itself: cut leaks, unreadable replies
        self._probes: dict[str, str] = {}  # nonce -> the graded cell it followed
        self._log: Path | None = None  # the guard's log, when the kernel is guarded
        self._log_identity: tuple[int, int] | None = None  # (device, inode) of the log, before any student code

    def watch_log(self, log: Path) -> None:
        """Remember the guard's log and which file it is, before any student code can touch it."""
        self._log = log
        self._log_identity = file_identity(log)

    def new_probe(self, cell: str) -> str:
        """A fresh nonce for a probe sent after the graded `cell`."""
        nonce = secrets.token_hex(8)
        self._probes[nonce] = cell
        return nonce

    def notice(self, kind: FindingKind, detail: str = "", *items: str) -> None:
        """A finding the grader made itself."""
        self._noticed.append(self._finding(kind, detail, *items))

    def judged(self, stopped: bool) -> tuple[Finding, ...]:
        """Every finding, the guard's log read and removed; `stopped`: the kernel stopped before the end."""
        findings: dict[Finding, None] = dict.fromkeys(self._noticed)
        if self._log is None:
            return tuple(findings)
        records, tampered = read_log(self._log, self._log_identity)
        reading = _LogReading(tampered=tampered)
        for record in records:
            self._read_record(record, reading, findings)
        self._judge_log(reading, findings, stopped)
        self._log.unlink(missing_ok=True)
        self._notice_unreadable_replies(tuple(findings), stopped)
        return tuple(findings)

    def _finding(self, kind: FindingKind, detail: str = "", *items: str) -> Finding:
        return Finding(kind, self.notebook, detail, items)

    def _read_record(self, record: dict, reading: _LogReading, findings: dict[Finding, None]) -> None:
        """One record of the guard's log: what it adds to the findings and to what the log shows overall."""
        if ("armed" in record or "probe" in record) and not self._written_to_our_log(record):
            reading.tampered = reading.tampered or "holds an answer that names another file"
        if "armed" in record:
            reading.armed = True
        elif "refused" in record:
            reading.refusals_logged += 1
            refused = self._finding(FindingKind.ANSWER_REFUSED, str(record.get("reason")), str(record["refused"]))
            findings[refused] = None
        elif "probe" in record:
            reading.answered.add(record["probe"])
            reading.refusals_counted = max(reading.refusals_counted, int(record.get("refusals", 0)))
            after = self._probes.get(record["probe"], "a cell")
            for seen in record.get("findings", []):
                if not any(f.kind is FindingKind.GUARD_SAW and f.detail == str(seen) for f in findings):
                    findings[self._finding(FindingKind.GUARD_SAW, str(seen), after)] = None
        else:
            findings[self._finding(FindingKind.FOREIGN_LOG_LINE)] = None

    def _judge_log(self, reading: _LogReading, findings: dict[Finding, None], stopped: bool) -> None:
        """What the whole log shows: tampering, a guard never armed, lost records, probes left unanswered."""
        if reading.tampered:
            findings[self._finding(FindingKind.LOG_TAMPERED, reading.tampered)] = None
        if not reading.armed and self._probes and not reading.tampered:
            # The guard is armed before any student code runs: unless its log shows a stranger's hand, that is ours.
            if any(f.kind is FindingKind.FOREIGN_LOG_LINE for f in findings):
                findings[self._finding(FindingKind.GUARD_NEVER_ARMED)] = None
            else:
                self._sink.notice(GraderFailure(GraderCause.GUARD_NOT_ARMED, self.notebook))
        if reading.refusals_counted > reading.refusals_logged:
            findings[self._finding(FindingKind.LOG_LOST_RECORDS)] = None
        if not stopped:
            for nonce, cell in self._probes.items():
                if nonce not in reading.answered:
                    findings[self._finding(FindingKind.PROBE_UNANSWERED, "", cell)] = None

    def _written_to_our_log(self, record: dict) -> bool:
        """True when the guard's record names the log the grader made as the file it was written to."""
        return self._log_identity is None or record.get("log") == list(self._log_identity)

    def _notice_unreadable_replies(self, findings: tuple[Finding, ...], stopped: bool) -> None:
        """An unreadable reply from a live kernel the guard saw nothing wrong in is ours (tried again); else the student's."""
        unreadable = [f for f in findings if f.kind is FindingKind.UNREADABLE_ANSWER]
        if unreadable and not stopped and all(f.kind in UNTAMPERED for f in findings):
            self._sink.notice(GraderFailure(GraderCause.REPLY_UNREADABLE, unreadable[0].text))
