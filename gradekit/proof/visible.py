"""What the visible checks alone decide: the share of negative controls they stop, and no right answer refused.

A student runs only the visible part of each test cell before submitting (the
release has the hidden region removed). Here the notebook scripts run in
process with every test cell cut down to that part, for each negative control
and correct alternative:
- a control is stopped visibly when a visible check fails on one of the cells
  it declares: the student learns of the mistake before the grader does; it
  is also counted as named when that failure names the control's misconception;
- a correct alternative (or the reference) that fails a visible check is a
  violation: a visible check must never refuse a right answer.
A control that no visible check can stop declares why (`hidden_only`, one
line); the figures print that reason beside it, and a reason on a control a
visible check does stop is stale.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

from gradekit.authoring.cells import BEGIN_HIDDEN, END_HIDDEN
from gradekit.core.diagnoses import named_misconceptions
from gradekit.core.notebook_script import Role, ScriptCell
from gradekit.proof.subjects import REFERENCE_ID, Subject


def visible_part(source: str) -> str:
    """A test cell's text as the release shows it: every region from BEGIN to END HIDDEN TESTS left out.

    As nbgrader's ClearHiddenTests does, the marker lines go with the region;
    an unclosed region runs to the end of the cell.
    """
    kept, hidden = [], False
    for line in source.splitlines():
        marker = line.strip()
        if marker == BEGIN_HIDDEN:
            hidden = True
        elif marker == END_HIDDEN:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)


def visible_script(script: tuple[ScriptCell, ...]) -> tuple[ScriptCell, ...]:
    """The script with each test cell cut down to its visible part; other cells as they are."""
    return tuple(
        dataclasses.replace(cell, body=visible_part(cell.body)) if cell.role is Role.TEST else cell for cell in script
    )


@dataclasses.dataclass(frozen=True)
class VisibleShare:
    """One notebook's negative controls and those a visible check already stops."""

    notebook: str
    controls: tuple[str, ...]
    stopped: tuple[str, ...]
    named: tuple[str, ...] = ()  # the stopped controls whose visible failure names their misconception
    hidden_only: tuple[tuple[str, str], ...] = ()  # (control, why only hidden tests can catch it), as declared

    @property
    def missed(self) -> tuple[str, ...]:
        return tuple(c for c in self.controls if c not in self.stopped)

    @property
    def missed_reasons(self) -> tuple[tuple[str, str], ...]:
        """Each missed control with its declared reason ("" when it gives none)."""
        reasons = dict(self.hidden_only)
        return tuple((c, reasons.get(c, "")) for c in self.missed)

    @property
    def stale_reasons(self) -> tuple[str, ...]:
        """Controls that declare only hidden tests can catch them, yet a visible check stops."""
        return tuple(c for c, _ in self.hidden_only if c in self.stopped)

    @property
    def share(self) -> float:
        return len(self.stopped) / len(self.controls) if self.controls else 1.0

    @property
    def percent(self) -> str:
        return f"{100 * self.share:.0f}%" if self.controls else "-"


@dataclasses.dataclass(frozen=True)
class VisibleRefusal:
    """A right answer (the reference or a correct alternative) that a visible check refused."""

    student_id: str
    notebook: str
    cell: str
    said: str


# For one subject and notebook: the test cells whose visible part failed, each with what it said.
FailedCells = dict[str, str]


def is_stopped(subject: Subject, failed: FailedCells) -> bool:
    """A control is stopped visibly when a cell it must fail already fails on its visible part."""
    control = subject.control
    return control is not None and any(cell in failed for cell in control.fails)


def is_named(subject: Subject, failed: FailedCells) -> bool:
    """The visible failure on a declared cell names the control's own misconception."""
    control = subject.control
    return control is not None and any(
        control.misconception in named_misconceptions(failed[cell]) for cell in control.fails if cell in failed
    )


def visible_shares(
    notebooks: Iterable[str], subjects: Iterable[Subject], failed: dict[tuple[str, str], FailedCells]
) -> tuple[VisibleShare, ...]:
    """Per notebook, in the order given: its controls and those stopped (`failed` by subject id and notebook)."""
    controls: dict[str, list[str]] = {name: [] for name in notebooks}
    stopped: dict[str, list[str]] = {name: [] for name in controls}
    named: dict[str, list[str]] = {name: [] for name in controls}
    reasons: dict[str, list[tuple[str, str]]] = {name: [] for name in controls}
    for subject in subjects:
        if subject.kind != "control" or subject.control is None or subject.control.notebook not in controls:
            continue
        notebook = subject.control.notebook
        controls[notebook].append(subject.student_id)
        if subject.control.hidden_only:
            reasons[notebook].append((subject.student_id, subject.control.hidden_only))
        seen = failed.get((subject.student_id, notebook), {})
        if is_stopped(subject, seen):
            stopped[notebook].append(subject.student_id)
        if is_named(subject, seen):
            named[notebook].append(subject.student_id)
    return tuple(
        VisibleShare(name, tuple(controls[name]), tuple(stopped[name]), tuple(named[name]), tuple(reasons[name]))
        for name in controls
    )


def visible_refusals(
    subjects: Iterable[Subject], failed: dict[tuple[str, str], FailedCells]
) -> tuple[VisibleRefusal, ...]:
    """Every visible check that fails the reference or a correct alternative."""
    refusals = []
    for subject in subjects:
        if subject.kind not in (REFERENCE_ID, "alternative"):
            continue
        for notebook in subject.notebooks:
            for cell, said in failed.get((subject.student_id, notebook), {}).items():
                refusals.append(VisibleRefusal(subject.student_id, notebook, cell, said))
    return tuple(refusals)


def judged_subjects(subjects: Iterable[Subject]) -> tuple[Subject, ...]:
    """The subjects whose visible results matter: the reference, the controls and the alternatives."""
    return tuple(s for s in subjects if s.kind in (REFERENCE_ID, "control", "alternative"))


def failed_visibly(
    subjects: Iterable[Subject], run_visible: Callable[[Subject, str], FailedCells]
) -> dict[tuple[str, str], FailedCells]:
    """Run each judged subject's notebooks on their visible checks only (`run_visible` does one notebook)."""
    return {
        (subject.student_id, notebook): run_visible(subject, notebook)
        for subject in judged_subjects(subjects)
        for notebook in subject.notebooks
    }


SHARE_COLUMNS = ("notebook", "negative controls", "stopped by a visible check", "misconception named", "share")


def share_table(shares: Iterable[VisibleShare]) -> list[tuple[str, ...]]:
    """Rows of SHARE_COLUMNS, one per notebook, then the total."""
    shares = tuple(shares)
    total = VisibleShare(
        "**every notebook**",
        sum((s.controls for s in shares), ()),
        sum((s.stopped for s in shares), ()),
        sum((s.named for s in shares), ()),
    )
    return [
        (s.notebook, str(len(s.controls)), str(len(s.stopped)), str(len(s.named)), s.percent) for s in (*shares, total)
    ]
