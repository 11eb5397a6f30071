"""nbgrader settings every command and server of the course's environment loads (`make` installs this file).

nbgrader 0.9.6 ends a validation in which no cell failed with "Success! Your
notebook passes all the tests.", a line no setting reaches. In a student's
notebook only the visible checks ran, so the line promises what the hidden tests
have not said; the course prints what is true instead, and, for a notebook released with a due date,
when it is due ("This notebook is due Friday 18 December 2026, 23:00 UTC, in 2 days.").
JupyterLab's Validate dialog draws its own copy of that line: the course's lab extension
rewords it, and shows the due line the validator's reply carries (its "due").

A failed check leads with its diagnosis, whole and wrapped, under the check's
name; its code follows, shortened to its first lines. nbgrader shows the whole
code first and cuts every line of the error at 80 characters, which loses the
advice at the end of a diagnosis. The dialog draws what the validator returns in
its order (the "source" first), so the validator returns the diagnosis there.

nbgrader's exchange takes a submission after the due date without a word. Here
`nbgrader submit` says that it was taken late, and by how much, and the list of
a student's submissions (the Assignments tab) carries the same words for each
late one (its "kit_late"), which the lab extension shows once Submit is done.
The due date is the one the course released: the `kit_due` of the notebooks in
the exchange, not the student's copies. Nothing here can refuse a submission.
"""

import datetime
import json
from html import escape
from pathlib import Path
from textwrap import fill

import zmq
from nbconvert.filters import strip_ansi
from nbgrader.exchange.default.list import ExchangeList
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import parse_utc
from nbgrader.validator import Validator

DUE_KEY = "kit_due"  # a release notebook's metadata: its due date (gradekit/authoring/due_header.py writes it)

NO_CELL_FAILED = (
    "No test cell failed. In a student's notebook those are the visible checks: they test the "
    "page's own examples only, and the grader also tests other inputs (on the course's hub, "
    "Pre-check runs those before you submit)."
)
CODE_LINES_SHOWN = 4  # of a failed check's code, after its diagnosis: enough to find the cell again

# Kernels get CurveZMQ keys, so ipykernel does not print its "running over TCP without
# encryption" warning on a student's screen at every Validate.
c = get_config()  # noqa: F821
c.KernelManager.transport_encryption = "auto" if zmq.has("curve") else "disabled"


def due_line(due: datetime.datetime, now: datetime.datetime) -> str:
    """ "due Friday 18 December 2026, 23:00 UTC, in 2 days", worded as the kit's gradekit/core/due_words.py.

    Written out here because a student's server loads this file without the kit; a test holds the two equal.
    """
    left = (due - now).total_seconds()
    relative = f"in {amount(left)}" if left > 0 else f"{amount(left)} ago"
    return f"due {when(due)}, {relative}"


def when(due: datetime.datetime) -> str:
    """ "Friday 18 December 2026, 23:00 UTC" """
    moment = due.astimezone(datetime.timezone.utc)
    return f"{moment:%A} {moment.day} {moment:%B %Y}, {moment:%H:%M} UTC"


def amount(seconds: float) -> str:
    """ "2 days", "5 h", "12 min": the largest whole unit, rounded down (at least a minute)."""
    days, hours, minutes = int(abs(seconds) // 86400), int(abs(seconds) // 3600), int(abs(seconds) // 60)
    return f"{days} day" + ("s" if days > 1 else "") if days else f"{hours} h" if hours else f"{max(minutes, 1)} min"


def late_words(due: datetime.datetime, submitted: datetime.datetime) -> str:
    """What a submission taken after `due` is told, or "" for one in time."""
    if submitted <= due:
        return ""
    return (
        f"Submitted {amount((submitted - due).total_seconds())} after the due date ({when(due)}): it is taken "
        "and marked late; the course's late policy applies (from the end of your extension, if you have one)."
    )


def zoned_due(text) -> datetime.datetime | None:
    """A `kit_due` value as a zoned date; None for none, or for one without a zone (no wrong time is said)."""
    try:
        due = datetime.datetime.fromisoformat(text) if isinstance(text, str) and text else None
    except ValueError:
        return None
    return due if due is not None and due.tzinfo is not None else None


def released_due(release: Path) -> datetime.datetime | None:
    """The due date the notebooks of a release in the exchange carry; None if they carry none, or disagree."""
    dates = set()
    for notebook in sorted(release.glob("*.ipynb")):
        metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
        dates.add(zoned_due(metadata.get(DUE_KEY)))  # a notebook without a date makes the set disagree
    return dates.pop() if len(dates) == 1 else None


def _due_words(self) -> str:
    """The validated notebook's due line, or "" for a notebook released without a due date."""
    due = zoned_due(getattr(self, "_kit_due", None))
    try:
        return due_line(due, datetime.datetime.now(datetime.timezone.utc)) if due else ""
    except (OverflowError, ValueError):  # a date at the calendar's very edge: say nothing rather than fail
        return ""


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


def diagnosis(cell, nbgraders_words=Validator._extract_error) -> str:
    """What the failed check said, whole: its exception's message (or its stderr), under the check's name."""
    said = []
    for output in cell.get("outputs", []):
        if output.output_type == "error":
            said.append(strip_ansi(output.evalue) or output.ename)
        elif output.output_type == "stream" and output.name == "stderr":
            said.append(strip_ansi(output.text).strip())
    if not said:
        said.append(nbgraders_words(Validator(), cell))  # no response, or partial credit
    name = cell.metadata.get("nbgrader", {}).get("grade_id", "")
    return (f"{name}: " if name else "") + "\n".join(said)


def shortened(source: str) -> str:
    lines = source.strip().splitlines()
    more = len(lines) - CODE_LINES_SHOWN
    return "\n".join(lines[:CODE_LINES_SHOWN] + ([f"... ({more} more lines of the check)"] if more > 0 else []))


def _diagnosis_first(self, filename: str, nbgraders_own=Validator.validate) -> dict:
    self._kit_due = None  # a notebook nbgrader stops at before reading its cells says no due date of another's
    results = nbgraders_own(self, filename)
    for failed in results.get("failed", []):
        code = shortened(failed["source"])
        failed["source"] = failed["raw_error"]  # the diagnosis, from _extract_error below
        failed["error"] = escape("The check's code:\n" + code)
        failed["raw_error"] = code
    due = _due_words(self)
    if due:
        results["due"] = due  # the lab extension shows it in the dialog; nbgrader's own code reads no such key
    return results


def _extract_diagnosis(self, cell) -> str:
    return diagnosis(cell)


def _print_diagnosis_first(self, source: str, error: str) -> None:
    self.stream.write("\n" + "=" * self.width + "\n")
    self.stream.write("A check failed:\n\n")
    for paragraph in source.splitlines():  # wrapped, never cut
        self.stream.write(fill(paragraph, width=self.width, initial_indent=self.indent, subsequent_indent=self.indent))
        self.stream.write("\n")
    self.stream.write("\nIts code:\n\n" + self._indent(error) + "\n\n")


class LateWordSubmit(ExchangeSubmit):
    """nbgrader's submit, then a word to a student whose submission came after the release's due date."""

    def copy_files(self):
        super().copy_files()  # the submission is in the exchange before anything below is tried
        try:
            due = released_due(Path(self.release_path))
            words = late_words(due, zoned_submission_time(self.timestamp)) if due else ""
        except Exception as error:  # noqa: BLE001 - a taken submission must never be reported as failed
            self.log.warning("Submitted; whether it was late could not be read from the release: %s", error)
            return
        if words:
            self.log.warning(words)


class LateWordList(ExchangeList):
    """nbgrader's list; each submission a student made late carries its words ("kit_late") for the lab."""

    def parse_assignments(self):
        assignments = super().parse_assignments()
        if self.cached:
            for assignment in assignments:
                self._mark_late(assignment)
        return assignments

    def _mark_late(self, assignment: dict) -> None:
        release = Path(self.root) / assignment["course_id"] / "outbound" / assignment["assignment_id"]
        try:
            due = released_due(release)
            for submission in assignment["submissions"] if due else []:
                words = late_words(due, zoned_submission_time(submission["timestamp"]))
                if words:
                    submission["kit_late"] = words
        except Exception as error:  # noqa: BLE001 - the list itself must still show
            self.log.warning("Whether %s was late could not be read: %s", assignment["assignment_id"], error)


def zoned_submission_time(timestamp: str) -> datetime.datetime:
    """nbgrader's timestamp of a submission (the one grading measures lateness from), as a zoned date."""
    return parse_utc(timestamp).replace(tzinfo=datetime.timezone.utc)


c.ExchangeFactory.submit = LateWordSubmit
c.ExchangeFactory.list = LateWordList

# A server reads its configuration afresh for every Validate, so each method is replaced once only.
if not getattr(Validator._print_num_failed, "says_what_ran", False):
    _honest_print_num_failed.says_what_ran = True  # type: ignore[attr-defined]
    Validator._print_num_failed = _honest_print_num_failed  # type: ignore[method-assign]
    Validator._preprocess = _remembering_preprocess  # type: ignore[method-assign]
if not getattr(Validator.validate, "diagnosis_first", False):
    _diagnosis_first.diagnosis_first = True  # type: ignore[attr-defined]
    Validator.validate = _diagnosis_first  # type: ignore[method-assign]
    Validator._extract_error = _extract_diagnosis  # type: ignore[method-assign]
    Validator._print_error = _print_diagnosis_first  # type: ignore[method-assign]
