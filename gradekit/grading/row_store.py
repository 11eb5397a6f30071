"""The coordinator's one open course gradebook for a grading run: each graded row stored in one transaction.

A row's record is written, its late penalties worked out again from the scores
now held (a worker's copy of the gradebook may lack a TA's written-answer
scores) and committed together, once; then its graded files are written and
its grades read back. One engine serves the whole run and is closed at its
end, so nbgrader's table checks run once, not three times a row. Between rows
the store holds no transaction, so formgrader and other writers can take the
gradebook's lock; a busy gradebook (or a server connection dropped between rows)
is rolled back and tried again with backoff, and a row still not stored is the
grader's failure (`GRADEBOOK_BUSY`).
"""

from __future__ import annotations

import logging
import shutil
import time
from types import TracebackType

from sqlalchemy.exc import OperationalError

from gradekit.core.course import Course
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.grades import SubmissionGrades
from gradekit.grading.gradebook import grades_in, open_gradebook
from gradekit.grading.gradebook_records import SubmissionRecord, put_record
from gradekit.grading.grader_failures import backoff_seconds
from gradekit.grading.refresh import reprice_in
from gradekit.grading.submission_grader import GradedSubmission

log = logging.getLogger(__name__)


def _worth_another_try(error: OperationalError) -> bool:
    """A locked SQLite file, or a server connection the store held for the run and the server dropped.

    The engine lives for the whole run: a PostgreSQL server restarted or closing idle sessions between
    rows leaves it a dead connection, which SQLAlchemy replaces on the next try.
    """
    return "locked" in str(error) or "busy" in str(error) or bool(error.connection_invalidated)


class RowStore:
    """The course gradebook, open for one run; use it as a context manager so it is closed."""

    def __init__(self, course: Course):
        self.course = course
        self.gradebook = open_gradebook(course)

    def __enter__(self) -> RowStore:
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self.gradebook.close()

    def store_and_read_back(self, graded: GradedSubmission) -> SubmissionGrades:
        """Store the row's grades and files and read the grades back, waiting out a busy gradebook a few times."""
        attempts = self.course.grader_attempts
        for attempt in range(1, attempts + 1):
            try:
                return self._store_once(graded)
            except OperationalError as error:
                self.gradebook.db.rollback()
                if not _worth_another_try(error):
                    raise
                log.warning("%s: the gradebook is busy (try %d of %d)", graded.student_id, attempt, attempts)
                if attempt == attempts:
                    raise GraderFailure(GraderCause.GRADEBOOK_BUSY, str(error.orig)) from error
                time.sleep(backoff_seconds(attempt + 1, self.course.retry_backoff_seconds))
            finally:
                self.gradebook.db.close()  # no transaction, hence no lock, held between rows
        raise AssertionError("unreachable: the last try returns or raises")

    def _store_once(self, graded: GradedSubmission) -> SubmissionGrades:
        """The record first: when the gradebook cannot take it, the graded files of the last grade stay too."""
        if graded.record is None:  # a row with grades always carries its record (submission_grader.py)
            raise ValueError(f"{graded.student_id}: a {graded.status} row came back without its gradebook record")
        self._put(graded.record)
        self._write_files(graded)
        return grades_in(self.gradebook, self.course, graded.student_id)

    def _put(self, record: SubmissionRecord) -> None:
        """The record and its late penalties, in one commit."""
        session = self.gradebook.db
        put_record(self.gradebook, self.course.assignment_id, record)
        session.flush()
        session.expire_all()  # a notebook's score is a query of the grades: read it again after they are written
        reprice_in(self.gradebook, self.course, [record.student_id])
        session.commit()

    def _write_files(self, graded: GradedSubmission) -> None:
        destination = self.course.autograded_dir / graded.student_id / self.course.assignment_id
        if destination.exists():
            shutil.rmtree(destination)
        for relative, content in graded.files:
            path = destination / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
