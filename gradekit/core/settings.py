"""The kit's own settings: typed traits with help, set as `c.CourseKit.*` in nbgrader_config.py.

nbgrader ignores this section; `load_course` reads it once and keeps the typed values on the course.
`python -m gradekit --help-all` lists every setting with its type, default and help.
"""

from __future__ import annotations

import re

from traitlets import Bool, Float, Integer, TraitError, Unicode, validate
from traitlets.config import Configurable

# An assignment id names a folder under source/ and release/, and nbgrader's gradebook key.
ASSIGNMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class CourseKit(Configurable):
    """Settings of the course kit that nbgrader itself has no trait for."""

    assignment_id = Unicode(
        "autograd",
        help="The course's one assignment: its folder under source/ and release/ and its name in the gradebook.",
    ).tag(config=True)

    kernel_memory_gb = Float(
        8.0,
        help=(
            "Address space, in GiB, that each grading kernel of the kit's parallel grader may use; "
            "a submission that needs more fails its own cell instead of exhausting the machine."
        ),
    ).tag(config=True)

    grader_attempts = Integer(
        3,
        help=(
            "How many times the parallel grader tries a submission whose grading failed for a reason of its own "
            "(a kernel or worker that did not start or was lost, a missing temporary file, an overloaded machine); "
            "after the last try the row is a grader error, never a score."
        ),
    ).tag(config=True)

    retry_backoff_seconds = Float(
        0.5,
        help=(
            "Seconds to wait before the second try of a grader-owned failure; each later try waits twice as long, "
            "so that a busy machine has time to recover."
        ),
    ).tag(config=True)

    allow_unconfined = Bool(
        False,
        help=(
            "Let the parallel grader run grading kernels without their operating-system box (bubblewrap) on a "
            "machine that cannot make one. Off by default: such a machine is refused, and when allowed every row "
            "says it was graded unconfined. The command line's --allow-unconfined sets it for one run."
        ),
    ).tag(config=True)

    @validate("grader_attempts")
    def _at_least_one_attempt(self, proposal):
        value = proposal["value"]
        if value < 1:
            raise TraitError(f"CourseKit.grader_attempts must be at least 1, got {value}")
        return value

    @validate("retry_backoff_seconds")
    def _a_wait_that_is_not_negative(self, proposal):
        value = proposal["value"]
        if value < 0:
            raise TraitError(f"CourseKit.retry_backoff_seconds must not be negative, got {value}")
        return value

    @validate("assignment_id")
    def _a_folder_name(self, proposal):
        value = proposal["value"]
        if not ASSIGNMENT_ID.fullmatch(value):
            raise TraitError(
                f"CourseKit.assignment_id must be a plain folder name (letters, digits, '_', '.', '-'), got {value!r}"
            )
        return value

    @validate("kernel_memory_gb")
    def _a_positive_size(self, proposal):
        value = proposal["value"]
        if not value > 0:
            raise TraitError(f"CourseKit.kernel_memory_gb must be more than 0 GiB, got {value}")
        return value
