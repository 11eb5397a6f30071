"""The kit's own settings: typed traits with help, set as `c.CourseKit.*` in nbgrader_config.py.

nbgrader ignores this section; `load_course` reads it once and keeps the typed values on the course.
`python -m gradekit --help-all` lists every setting with its type, default and help.
"""

from __future__ import annotations

import re

from traitlets import Float, TraitError, Unicode, validate
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
