"""Canvas's gradebook import file.

Canvas imports the layout of its own gradebook export (Canvas Instructor Guide, "How do I import
grades in the Gradebook?"): the five columns that identify a student, then one column per
assignment headed "Assignment Name (canvas assignment id)". A column without an id makes Canvas
create a new assignment; a blank cell leaves that grade as Canvas has it.
"""

from __future__ import annotations

from gradekit.lms.roster import RosterEntry
from gradekit.lms.scores import GradeItem, ScoreTable, score_cells

IDENTITY_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def canvas_header(items: tuple[GradeItem, ...], assignment_ids: dict[str, str]) -> list[str]:
    return [*IDENTITY_COLUMNS, *(column_title(item, assignment_ids) for item in items)]


def column_title(item: GradeItem, assignment_ids: dict[str, str]) -> str:
    """An assignment's total goes to the Canvas assignment given for it; per-cell columns become new assignments."""
    canvas_id = assignment_ids.get(item.assignment, "") if item.is_total else ""
    return f"{item.title} ({canvas_id})" if canvas_id else item.title


def canvas_rows(roster: tuple[RosterEntry, ...], table: ScoreTable, assignment_ids: dict[str, str]) -> list[list[str]]:
    rows = [canvas_header(table.items, assignment_ids)]
    for entry in roster:
        rows.append([*(entry.get(column) for column in IDENTITY_COLUMNS), *score_cells(table, entry.student_id)])
    return rows
