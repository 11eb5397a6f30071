"""Per-student extensions of the due date: a JSON file under the course, written whole by `gradekit extend`.

One extension per student of the course's assignment; granting another replaces it. Every reader
(the pre-check's closing, grading's lateness and penalty, the class report) asks `due_for`, so a
student's deadline is the same everywhere. A bad grant is refused before the file is touched.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from pathlib import Path

from gradekit.core.atomic_files import atomic_write


class BadExtension(ValueError):
    """An extension that cannot be granted; the file is left as it was."""


@dataclasses.dataclass(frozen=True)
class Extension:
    student_id: str
    until: datetime.datetime  # zoned
    why: str
    granted_at: datetime.datetime  # zoned

    def as_json(self) -> dict:
        return {"until": self.until.isoformat(), "why": self.why, "granted_at": self.granted_at.isoformat()}


def read_extensions(path: Path) -> dict[str, Extension]:
    """Student id -> their extension; an absent file is no extensions, a damaged one a clear error."""
    if not path.exists():
        return {}
    try:
        entries = json.loads(path.read_text())
        return {
            student: Extension(
                student,
                _zoned(entry["until"], f"{student}'s extension"),
                str(entry["why"]),
                _zoned(entry["granted_at"], f"{student}'s grant time"),
            )
            for student, entry in sorted(entries.items())
        }
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise BadExtension(f"{path} is not a file of extensions: {error}") from None


def due_for(due: datetime.datetime | None, extensions: dict[str, Extension], student: str) -> datetime.datetime | None:
    """The student's own deadline: their extension if they have one, else the assignment's due date."""
    extension = extensions.get(student)
    return extension.until if extension is not None else due


def grant(
    path: Path,
    student: str,
    until_text: str,
    why: str,
    due: datetime.datetime | None,
    students: frozenset[str],
    now: datetime.datetime,
) -> Extension:
    """Record `student`'s extension until `until_text` (ISO 8601 with a zone), after checking every part of it."""
    if student not in students:
        known = ", ".join(sorted(students)[:8]) or "none yet"
        raise BadExtension(f"{student!r} is not a student of the course (the gradebook knows: {known})")
    until = _zoned(until_text, "--until")
    if due is None:
        raise BadExtension("the assignment has no due date to extend: set c.CourseKit.due_dates in nbgrader_config.py")
    if until <= due:
        raise BadExtension(f"--until {until.isoformat()} is not after the due date, {due.isoformat()}")
    if not why.strip():
        raise BadExtension("--why must say why the extension was granted")
    extensions = read_extensions(path)
    extension = Extension(student, until, why.strip(), now)
    extensions[student] = extension
    text = json.dumps({name: entry.as_json() for name, entry in sorted(extensions.items())}, indent=2) + "\n"
    atomic_write(path, text.encode())
    return extension


def _zoned(text: str, what: str) -> datetime.datetime:
    try:
        when = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise BadExtension(f"{what}: {text!r} is not an ISO 8601 date (e.g. 2026-12-18T23:00:00+00:00)") from None
    if when.tzinfo is None:
        raise BadExtension(f"{what}: {text!r} has no time zone (add one, e.g. +00:00)")
    return when
