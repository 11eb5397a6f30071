"""The roster: one CSV row per enrolled student, mapping nbgrader's student id to the LMS's own columns."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

STUDENT_ID = "student_id"


class RosterError(ValueError):
    """The roster cannot be used; the message says which file, row or column is wrong."""


@dataclasses.dataclass(frozen=True)
class RosterEntry:
    student_id: str
    columns: dict[str, str]

    def get(self, column: str) -> str:
        return self.columns.get(column, "")


def load_roster(path: Path, required: tuple[str, ...]) -> tuple[RosterEntry, ...]:
    """The roster's rows in file order; a missing column, a blank or repeated student id is an error."""
    path = Path(path)
    if not path.is_file():
        raise RosterError(f"roster {path} does not exist")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in (STUDENT_ID, *required) if name not in (reader.fieldnames or ())]
        if missing:
            raise RosterError(f"roster {path} lacks the column(s) {', '.join(missing)}")
        return _entries(path, list(reader))


def _entries(path: Path, rows: list[dict[str, str]]) -> tuple[RosterEntry, ...]:
    entries, seen = [], set()
    for line, row in enumerate(rows, start=2):
        student = (row.get(STUDENT_ID) or "").strip()
        if not student:
            raise RosterError(f"roster {path}, line {line}: the {STUDENT_ID} is blank")
        if student in seen:
            raise RosterError(f"roster {path}, line {line}: student {student!r} appears twice")
        seen.add(student)
        columns = {key: (value or "").strip() for key, value in row.items() if key and key != STUDENT_ID}
        entries.append(RosterEntry(student, columns))
    return tuple(entries)
