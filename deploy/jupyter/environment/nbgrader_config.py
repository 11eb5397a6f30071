"""nbgrader settings every command and server of the course's environment loads (`make` installs this file).

nbgrader 0.9.6 ends a validation in which no cell failed with "Success! Your
notebook passes all the tests.", a line no setting reaches. In a student's
notebook only the visible checks ran, so the line promises what the hidden tests
have not said; the course prints what is true instead, and, for a notebook released with a due date,
when it is due ("This notebook is due Friday 18 December 2026, 23:00 UTC, in 2 days.").
JupyterLab's Validate dialog draws its own copy of that line: the course's lab extension
rewords it (the due date is not in the dialog: it heads the notebook).
"""

import datetime
from textwrap import fill

from nbgrader.validator import Validator

DUE_KEY = "kit_due"  # a release notebook's metadata: its due date (gradekit/authoring/due_header.py writes it)

NO_CELL_FAILED = (
    "No test cell failed. In a student's notebook those are the visible checks: they test the "
    "page's own examples only, and the grader also tests other inputs (on the course's hub, "
    "Pre-check runs those before you submit)."
)


def due_line(due: datetime.datetime, now: datetime.datetime) -> str:
    """ "due Friday 18 December 2026, 23:00 UTC, in 2 days", worded as the kit's gradekit/core/due_words.py.

    Written out here because a student's server loads this file without the kit; a test holds the two equal.
    """
    moment = due.astimezone(datetime.timezone.utc)
    left = (due - now).total_seconds()
    days, hours, minutes = int(abs(left) // 86400), int(abs(left) // 3600), int(abs(left) // 60)
    amount = f"{days} day" + ("s" if days > 1 else "") if days else f"{hours} h" if hours else f"{max(minutes, 1)} min"
    relative = f"in {amount}" if left > 0 else f"{amount} ago"
    return f"due {moment:%A} {moment.day} {moment:%B %Y}, {moment:%H:%M} UTC, {relative}"


def _due_words(self) -> str:
    """The validated notebook's due line, or "" for a notebook released without a due date."""
    text = getattr(self, "_kit_due", None)
    try:
        due = datetime.datetime.fromisoformat(text) if text else None
    except ValueError:
        return ""
    if due is None or due.tzinfo is None:
        return ""
    return due_line(due, datetime.datetime.now(datetime.timezone.utc))


def _honest_print_num_failed(self, num_failed: int, nbgraders_own=Validator._print_num_failed) -> None:
    if num_failed:
        nbgraders_own(self, num_failed)
    else:
        self.stream.write(fill(NO_CELL_FAILED, width=self.width) + "\n")
    due = _due_words(self)
    if due:
        self.stream.write(f"This notebook is {due}.\n")


def _remembering_preprocess(self, nb, nbgraders_own=Validator._preprocess):
    """nbgrader's own step, after noting the notebook's due date for the line above."""
    self._kit_due = nb.metadata.get(DUE_KEY)
    return nbgraders_own(self, nb)


# A server reads its configuration afresh for every Validate, so the line is replaced once only.
if not getattr(Validator._print_num_failed, "says_what_ran", False):
    _honest_print_num_failed.says_what_ran = True  # type: ignore[attr-defined]
    Validator._print_num_failed = _honest_print_num_failed  # type: ignore[method-assign]
    Validator._preprocess = _remembering_preprocess  # type: ignore[method-assign]
