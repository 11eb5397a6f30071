"""Moodle's grade import file (Grades > Import > CSV file).

Moodle asks, while importing, which column identifies users and which grade item each other
column fills. We write the identifier first, "Email address" (map it to the user's email),
then one column per grade item named as in nbgrader. A blank cell imports no grade for that user.
"""

from __future__ import annotations

from gradekit.lms.roster import RosterEntry
from gradekit.lms.scores import GradeItem, ScoreTable, score_cells

IDENTITY_COLUMNS = ("Email address",)


def moodle_header(items: tuple[GradeItem, ...]) -> list[str]:
    return [*IDENTITY_COLUMNS, *(item.title for item in items)]


def moodle_rows(roster: tuple[RosterEntry, ...], table: ScoreTable) -> list[list[str]]:
    rows = [moodle_header(table.items)]
    for entry in roster:
        rows.append([*(entry.get(column) for column in IDENTITY_COLUMNS), *score_cells(table, entry.student_id)])
    return rows
