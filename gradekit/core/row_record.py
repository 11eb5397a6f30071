"""What the last grading run said of each row beyond its grades, kept as JSON beside the class report.

The gradebook holds scores, not the notes (what intake set aside or repaired), the findings, a
failed row's message, the attempts a row took or what graded it (`graded_by`: the checks' digest,
the kit's version, the time; a row a run did not regrade keeps the record of the run that did).
`grade --reports-only` reads the rows back from the gradebook; this record gives them back their
words, so a refresh after formgrader reports the same class the grading run did, only with
today's scores.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gradekit.core.atomic_files import atomic_write
from gradekit.core.failures import GraderCause
from gradekit.core.grading_stamp import GradingStamp
from gradekit.core.notes import Finding, FindingKind, Note, NoteKind
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status

ROWS_FILE = "rows.json"


def save_rows(folder: Path, rows: tuple[Outcome, ...]) -> Path:
    """Write every row's words (not its grades) to `folder`/rows.json, by student id."""
    target = Path(folder) / ROWS_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    record = json.dumps({row.student_id: _words(row) for row in rows}, indent=1, sort_keys=True)
    atomic_write(target, record.encode())  # a refresh must never read half a record
    return target


def load_rows(folder: Path) -> dict[str, Outcome]:
    """The rows `save_rows` wrote (without grades), by student id; none when no run wrote them or they do not read."""
    source = Path(folder) / ROWS_FILE
    try:
        saved = json.loads(source.read_text())
        return {student: _row(student, words) for student, words in saved.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # reported from the gradebook alone, as before any run wrote the record


def _words(row: Outcome) -> dict:
    return {
        "status": row.status.value,
        "message": row.message,
        "worker": row.worker,
        "notes": [_entry(note) for note in row.notes],
        "findings": [_entry(finding) for finding in row.findings],
        "cause": row.cause.name if row.cause else None,
        "attempts": row.attempts,
        "graded_by": row.graded_by.words() if row.graded_by else None,
    }


def _entry(entry: Note | Finding) -> dict:
    return {"kind": entry.kind.name, "notebook": entry.notebook, "detail": entry.detail, "items": list(entry.items)}


def _row(student: str, words: dict) -> Outcome:
    return Outcome(
        student_id=student,
        status=_status(words["status"]),
        message=str(words["message"]),
        grades=None,
        worker=str(words["worker"]),
        notes=tuple(Note(NoteKind[e["kind"]], e["notebook"], e["detail"], tuple(e["items"])) for e in words["notes"]),
        findings=tuple(
            Finding(FindingKind[e["kind"]], e["notebook"], e["detail"], tuple(e["items"])) for e in words["findings"]
        ),
        cause=GraderCause[words["cause"]] if words["cause"] else None,
        attempts=int(words["attempts"]),
        graded_by=GradingStamp.from_words(words["graded_by"]) if words.get("graded_by") else None,
    )


def _status(word: str) -> Status:
    for status in Status:  # Status(word) would do, but its two-part members make the type checker refuse it
        if status.value == word:
            return status
    raise ValueError(f"no status {word!r}")


def with_grades_of(earlier: Outcome, current: Outcome) -> Outcome:
    """`earlier`'s words with `current`'s grades; where a TA changed the flag since, the gradebook's status and words."""
    message = earlier.message if earlier.status is current.status else current.message
    return dataclasses.replace(earlier, grades=current.grades, status=current.status, message=message)
