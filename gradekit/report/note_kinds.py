"""The notes on a cohort's rows, grouped by what happened rather than listed one student at a time.

Intake and the grader write each note as a sentence (gradekit/grading/intake.py,
safe_execute.py, submission_grader.py). A note's kind is read back from its
wording here; a note no rule knows still groups, under its own text with the
quoted names taken out.
"""

from __future__ import annotations

import dataclasses
import re

from gradekit.core.rows import CohortRow

# (pattern, what the submissions did, as in "12 submissions <kind>"); a `items` group lists names.
RULES = (
    (r"^not submitted \(scores 0\): (?P<items>.+)$", "left out notebooks (they score 0)"),
    (
        r"^not graded \(not part of the assignment\): (?P<items>.+)$",
        "handed in files that are not part of the assignment (set aside)",
    ),
    (r"\.ipynb cannot be read as a notebook", "handed in a notebook that cannot be read (it scores 0)"),
    (r" is a symbolic link to .*: refused, not followed", "handed in a symbolic link (refused, not followed)"),
    (r"^[^:]+: cell .* had its grade id changed", "changed a graded cell's grade id (restored)"),
    (r"^[^:]+: unknown graded cell ", "added an unknown graded cell (run as ordinary code)"),
    (r"^[^:]+: a second copy of ", "copied a graded cell (the copy runs as ordinary code)"),
    (r"^[^:]+: deleted cell .* was put back", "deleted a graded cell (put back from the release)"),
    (r"^[^:]+: answer cell .* was deleted", "deleted an answer cell (its tests score 0)"),
    (r"^[^:]+: cells were reordered", "reordered cells (graded in the submitted order)"),
    (r"^[^:]+: the grader could not run ", "had a cell the grader could not run"),
    (r"^[^:]+: .* ran past the .* limit", "had a cell that ran past the time limit (interrupted)"),
    (r"^[^:]+: nbgrader could not grade it", "had a notebook nbgrader could not grade (it scores 0)"),
    (r"; the cells after it score 0$", "stopped their kernel (the cells after it score 0)"),
)
COMPILED = tuple((re.compile(pattern), kind) for pattern, kind in RULES)
QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|\([^)]*\)")


@dataclasses.dataclass(frozen=True)
class NoteGroup:
    """One kind of note and every (student, note) of that kind, students in row order."""

    kind: str
    notes: tuple[tuple[str, str], ...]
    item_counts: tuple[int, ...] = ()  # for notes that list names: how many each note listed

    @property
    def students(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(student for student, _ in self.notes))

    @property
    def summary(self) -> str:
        """ "110 submissions left out notebooks (they score 0): 10 each"."""
        count = len(self.students)
        line = f"{count} submission{'s' if count != 1 else ''} {self.kind}"
        if self.item_counts:
            low, high = min(self.item_counts), max(self.item_counts)
            line += f": {low} each" if low == high else f": {low} to {high} each"
        return line


def note_kind(note: str) -> tuple[str, int | None]:
    """The kind of a note, and how many names it lists when it is a listing note."""
    for pattern, kind in COMPILED:
        match = pattern.search(note)
        if match:
            items = match.groupdict().get("items")
            return kind, len(items.split(", ")) if items else None
    return "noted: " + QUOTED.sub("…", note.split(": ", 1)[-1]), None


def note_groups(rows: tuple[CohortRow, ...]) -> tuple[NoteGroup, ...]:
    """Every kind of note on the rows, the most widespread first."""
    notes: dict[str, list[tuple[str, str]]] = {}
    counts: dict[str, list[int]] = {}
    for row in rows:
        for note in row.notes:
            kind, listed = note_kind(note)
            notes.setdefault(kind, []).append((row.student_id, note))
            if listed is not None:
                counts.setdefault(kind, []).append(listed)
    groups = [NoteGroup(kind, tuple(found), tuple(counts.get(kind, ()))) for kind, found in notes.items()]
    return tuple(sorted(groups, key=lambda g: (-len(g.students), g.kind)))
