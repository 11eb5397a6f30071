"""The course's due date and its students' extensions, written into a gradebook before grading.

nbgrader measures lateness itself (`SubmittedAssignment.total_seconds_late`) from the gradebook's due
date plus the submission's extension, and its `AssignLatePenalties` hands that to the late policy.
So the course's one due date (`CourseKit.due_dates`) and the extensions file are copied into the
gradebook here, every run, and the gradebook never holds a date of its own.
"""

from __future__ import annotations

import datetime
import logging

from nbgrader.api import MissingEntry

from gradekit.core.course import Course
from gradekit.core.extensions import Extension, read_extensions
from gradekit.grading.gradebook import open_gradebook

log = logging.getLogger(__name__)


def gradebook_date(when: datetime.datetime) -> datetime.datetime:
    """A zoned date as nbgrader's gradebook keeps dates: UTC without a zone."""
    return when.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def record_deadlines(course: Course, students: list[str], extensions: dict[str, Extension] | None = None) -> None:
    """The due date onto the assignment, and each of `students`' extension onto their submission.

    A submission row is made only for a student with an extension (autograde would make it a
    moment later); a row that exists loses an extension the file no longer grants.
    """
    extensions = read_extensions(course.extensions_file) if extensions is None else extensions
    due = gradebook_date(course.due_date) if course.due_date else None
    with open_gradebook(course) as gradebook:
        gradebook.update_or_create_assignment(course.assignment_id, duedate=due)
        for student in students:
            extension = extensions.get(student)
            try:
                submission = gradebook.find_submission(course.assignment_id, student)
            except MissingEntry:
                if extension is None or due is None:
                    continue
                gradebook.update_or_create_student(student)
                submission = gradebook.add_submission(course.assignment_id, student)
            granted = gradebook_date(extension.until) - due if extension and due else None
            submission.extension = granted
            if granted:
                log.info("%s: extension of %s recorded", student, granted)
        gradebook.db.commit()
