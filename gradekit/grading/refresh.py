"""The cohort's rows read back from the gradebook, without grading: what `grade --reports-only` reports from.

After a TA grades written answers in formgrader the gradebook holds scores the feedback, the CSV files,
the LMS file and the class report have not seen. The late penalty nbgrader stored at autograding was
taken from the notebook's score then, before the written answers counted, so it is worked out again
from today's score with the same policy, exactly as `AssignLatePenalties` would.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from nbgrader.api import Gradebook, SubmittedAssignment

from gradekit.core.course import Course
from gradekit.core.outcome import Outcome
from gradekit.core.row_record import with_grades_of
from gradekit.core.status import Status
from gradekit.grading.gradebook import late_policy, open_gradebook, read_grades
from gradekit.grading.late_policy import LatePolicy


def reapply_late_penalties(course: Course, students: Collection[str] | None = None) -> int:
    """Each graded notebook's late penalty from its current score (the `students`' only, when named).

    Returns how many penalties changed.
    """
    with open_gradebook(course) as gradebook:
        changed = reprice_in(gradebook, course, students)
        gradebook.db.commit()
    return changed


def reprice_in(gradebook: Gradebook, course: Course, students: Collection[str] | None = None) -> int:
    """`reapply_late_penalties` inside an open gradebook's transaction, left for the caller to commit."""
    policy = late_policy(course)
    if students is None:
        submissions = list(gradebook.find_assignment(course.assignment_id).submissions)
    else:
        submissions = [gradebook.find_submission(course.assignment_id, student) for student in students]
    return sum(_reprice(policy, submission) for submission in submissions)


def _reprice(policy: LatePolicy, submission: SubmittedAssignment) -> int:
    """The submission's notebooks' penalties from their scores now; how many changed."""
    late = float(submission.total_seconds_late)
    changed = 0
    for notebook in submission.notebooks:
        penalty = min(policy.late_submission_penalty(submission.student.id, notebook.score, late), notebook.score)
        penalty_or_none = penalty if late > 0 else None
        if notebook.late_submission_penalty != penalty_or_none:
            notebook.late_submission_penalty = penalty_or_none
            changed += 1
    return changed


def gradebook_rows(course: Course, earlier: Mapping[str, Outcome] | None = None) -> tuple[Outcome, ...]:
    """One row per student the gradebook holds a graded submission of, by student id.

    `earlier` (the last grading run's rows, `core/row_record.py`) gives each row back its notes and
    findings; its rows the gradebook holds no grades of (a submission that could not be graded) stay too.
    """
    earlier = earlier or {}
    with open_gradebook(course) as gradebook:
        submissions = gradebook.find_assignment(course.assignment_id).submissions
        held = sorted((s.student.id, any(n.flagged for n in s.notebooks)) for s in submissions)
    rows = []
    for student, flagged in held:
        if not (course.autograded_dir / student / course.assignment_id).is_dir():
            continue  # never graded here (an extension's placeholder, or graded elsewhere)
        status = Status.FLAGGED if flagged else Status.GRADED
        message = "grade withheld for a TA (see the last grading run)" if flagged else ""
        current = Outcome(student_id=student, status=status, message=message, grades=read_grades(course, student))
        rows.append(with_grades_of(earlier[student], current) if student in earlier else current)
    held_ids = {row.student_id for row in rows}
    rows += [row for student, row in earlier.items() if student not in held_ids and not row.status.has_grades]
    return tuple(sorted(rows, key=lambda row: row.student_id))


def rows_kept(course: Course, earlier: Mapping[str, Outcome], regraded: tuple[Outcome, ...]) -> tuple[Outcome, ...]:
    """`regraded` with every other student's row as the gradebook and `earlier` hold it, by student id.

    What `grade --student` reports: the whole cohort, with only the named students graded again.
    """
    ids = {row.student_id for row in regraded}
    others = tuple(row for row in gradebook_rows(course, earlier) if row.student_id not in ids)
    return tuple(sorted(regraded + others, key=lambda row: row.student_id))
