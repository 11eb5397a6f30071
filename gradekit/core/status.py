"""The status of one submission's row in a cohort run."""

import enum


class Status(enum.StrEnum):
    """A `str` underneath, so CSV files and printed rows read "graded", "flagged" or "failed"."""

    GRADED = "graded"  # scores are in the gradebook
    FLAGGED = "flagged"  # graded, but the grade is withheld for a TA
    FAILED = "failed"  # nothing could be graded
