"""The notes on a cohort's rows, grouped by what happened rather than listed one student at a time.

Notes arrive as values made where each event happened (gradekit/core/notes.py),
so a note's group is its kind, whatever its wording.
"""

from __future__ import annotations

import dataclasses

from gradekit.core.notes import Note, NoteKind
from gradekit.core.outcome import Outcome


@dataclasses.dataclass(frozen=True)
class NoteGroup:
    """One kind of note and every (student, note) of that kind, students in row order."""

    kind: NoteKind
    notes: tuple[tuple[str, Note], ...]

    @property
    def students(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(student for student, _ in self.notes))

    @property
    def item_counts(self) -> tuple[int, ...]:
        """For notes that list names: how many each note listed."""
        return tuple(len(note.items) for _, note in self.notes) if self.kind.lists_items else ()

    @property
    def summary(self) -> str:
        """ "110 submissions left out notebooks (they score 0): 10 each"."""
        count = len(self.students)
        line = f"{count} submission{'s' if count != 1 else ''} {self.kind.phrase}"
        if self.item_counts:
            low, high = min(self.item_counts), max(self.item_counts)
            line += f": {low} each" if low == high else f": {low} to {high} each"
        return line


def note_groups(rows: tuple[Outcome, ...]) -> tuple[NoteGroup, ...]:
    """Every kind of note on the rows, the most widespread first."""
    notes: dict[NoteKind, list[tuple[str, Note]]] = {}
    for row in rows:
        for note in row.notes:
            notes.setdefault(note.kind, []).append((row.student_id, note))
    groups = [NoteGroup(kind, tuple(found)) for kind, found in notes.items()]
    return tuple(sorted(groups, key=lambda g: (-len(g.students), g.kind.phrase)))
