"""`gradekit extend STUDENT --until DATE --why TEXT`: one student's later deadline, kept in extensions.json.

The student must be known to the course (in the gradebook or with a submission), the date must carry
a time zone and lie after the due date; otherwise the command says why and changes nothing.
"""

from __future__ import annotations

import datetime
import sys

from gradekit.core.course import Course
from gradekit.core.extensions import BadExtension, grant
from gradekit.grading.gradebook import open_gradebook


def known_students(course: Course) -> frozenset[str]:
    """Every student the gradebook holds, and everyone with a folder in submitted/."""
    with open_gradebook(course) as gradebook:
        enrolled = {student.id for student in gradebook.students}
    folder = course.submitted_dir
    submitted = {path.name for path in folder.iterdir() if path.is_dir()} if folder.is_dir() else set()
    return frozenset(enrolled | submitted)


def extend(course: Course, student: str, until: str, why: str, now: datetime.datetime | None = None) -> int:
    now = now or datetime.datetime.now(datetime.timezone.utc)
    try:
        granted = grant(course.extensions_file, student, until, why, course.due_date, known_students(course), now)
    except BadExtension as error:
        print(f"extend: {error}; nothing was changed", file=sys.stderr)
        return 2
    print(
        f"{granted.student_id}: extended until {granted.until.isoformat()} ({granted.why}); in {course.extensions_file}"
    )
    print("the pre-check, grading's lateness and penalty and the class report follow it from now on")
    return 0
