"""Notes and findings on a submission, kept as values from where they happen to where they are shown.

A note says what was set aside or repaired on the way to a grade (intake,
the hardened execute step, the grader); a finding says why a grade is
withheld for a TA. Both are made where the event happens and turned into
a sentence only where a person reads them (terminal, CSV, HTML, gradebook),
so grouping or blaming a notebook never depends on the wording.

Each kind holds the phrase that groups its notes in the class report
("12 submissions <phrase>") and how to word one note. `items` holds names
(notebooks, files, grade ids, cells); `detail` holds free text (an error,
a reason, a link's target); `notebook` is "" when the note is about the
whole submission.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Callable


@dataclasses.dataclass(frozen=True)
class Note:
    """Something set aside or repaired on the way to a grade; `text` is the sentence a TA reads."""

    kind: NoteKind
    notebook: str
    detail: str = ""
    items: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.kind.sentence(self)

    def __str__(self) -> str:
        return self.text


@dataclasses.dataclass(frozen=True)
class Finding:
    """A reason to withhold a notebook's grade for a TA; `text` names the notebook first."""

    kind: FindingKind
    notebook: str
    detail: str = ""
    items: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return f"{self.notebook}: {self.kind.sentence(self)}" if self.notebook else self.kind.sentence(self)

    def __str__(self) -> str:
        return self.text


def _listed(note: Note | Finding) -> str:
    return ", ".join(note.items)


def _first(note: Note | Finding) -> str:
    """The first name the note is about, quoted."""
    return repr(note.items[0]) if note.items else "''"


def _in_notebook(words: Callable[[Note], str]) -> Callable[[Note], str]:
    return lambda note: f"{note.notebook}: {words(note)}"


class _Kind(enum.Enum):
    """A kind whose value is (phrase, how to word one value of the kind)."""

    @property
    def phrase(self) -> str:
        """What the submissions did, as in "12 submissions <phrase>"."""
        return self.value[0]

    def sentence(self, value: Note | Finding) -> str:
        return self.value[1](value)

    def __reduce_ex__(self, protocol: object) -> tuple:
        # By name: the wording functions in the value cannot be pickled (workers send rows back by pickle).
        return getattr, (type(self), self.name)


class NoteKind(_Kind):
    """One member per kind of event; its value is (group phrase, how to word one note)."""

    LEFT_OUT = (
        "left out notebooks (they score 0)",
        lambda n: f"not submitted (scores 0): {_listed(n)}",
    )
    NOT_IN_ASSIGNMENT = (
        "handed in files that are not part of the assignment (set aside)",
        lambda n: f"not graded (not part of the assignment): {_listed(n)}",
    )
    UNREADABLE = (
        "handed in a notebook that cannot be read (it scores 0)",
        lambda n: f"{n.notebook}.ipynb cannot be read as a notebook ({n.detail}); it scores 0",
    )
    SYMBOLIC_LINK = (  # items: the link's name; detail: its target; notebook set when it stood for one
        "handed in a symbolic link (refused, not followed)",
        lambda n: (
            f"{_listed(n)} is a symbolic link to {n.detail!r}: refused, not followed"
            + ("; it scores 0" if n.notebook else "")
        ),
    )
    GRADE_ID_CHANGED = (  # items: the id as submitted, then the id restored
        "changed a graded cell's grade id (restored)",
        _in_notebook(lambda n: f"cell {_first(n)} had its grade id changed; restored to {n.items[-1]!r}"),
    )
    UNKNOWN_CELL = (
        "added an unknown graded cell (run as ordinary code)",
        _in_notebook(lambda n: f"unknown graded cell {_first(n)} is run as ordinary code"),
    )
    SECOND_COPY = (
        "copied a graded cell (the copy runs as ordinary code)",
        _in_notebook(lambda n: f"a second copy of {_first(n)} is run as ordinary code"),
    )
    CELL_PUT_BACK = (
        "deleted a graded cell (put back from the release)",
        _in_notebook(lambda n: f"deleted cell {_first(n)} was put back from the release"),
    )
    ANSWER_DELETED = (
        "deleted an answer cell (its tests score 0)",
        _in_notebook(lambda n: f"answer cell {_first(n)} was deleted; its tests score 0"),
    )
    REORDERED = (
        "reordered cells (graded in the submitted order)",
        _in_notebook(lambda n: "cells were reordered; graded in the submitted order"),
    )
    NOT_RUN = (  # items: the cell; detail: what went wrong
        "had a cell the grader could not run",
        _in_notebook(lambda n: f"the grader could not run {_listed(n)} ({n.detail})"),
    )
    INTERRUPTED = (  # items: the cell; detail: the limit in seconds
        "had a cell that ran past the time limit (interrupted)",
        _in_notebook(lambda n: f"{_listed(n)} ran past the {n.detail} s limit and was interrupted"),
    )
    IDLE_SPENT = (  # items: the cell; detail: the submission's idle allowance in seconds
        "had a cell that sat sleeping or blocked after the idle allowance was spent (interrupted)",
        _in_notebook(
            lambda n: (
                f"{_listed(n)} sat sleeping or blocked after the submission's {n.detail} s of idle time "
                "were spent, and was interrupted"
            )
        ),
    )
    NBGRADER_FAILED = (
        "had a notebook nbgrader could not grade (it scores 0)",
        _in_notebook(lambda n: f"nbgrader could not grade it ({n.detail}); it scores 0"),
    )
    UNCONFINED = (  # detail: why the machine could not box the kernels
        "were graded without the kernel box (the TA allowed it)",
        lambda n: f"graded without the kernel box, as the TA allowed: {n.detail}",
    )
    NO_TREE_LIMIT = (  # detail: why no cgroup could be made for the kernels
        "were graded without a memory and process limit on each kernel's whole tree (no cgroup)",
        lambda n: (
            f"graded without a cgroup on each kernel's process tree ({n.detail}): memory is capped per process, "
            "and the kernel may start no process"
        ),
    )
    RECORD_MADE = (  # items: the files made; detail: the time written
        "was not handed in through the exchange (its submission record was made at intake)",
        lambda n: (
            f"not handed in through the exchange: made {_listed(n)} (time: the notebooks' last change, "
            f"{n.detail}), so that release_feedback can run"
        ),
    )
    TOO_MANY_PROCESSES = (  # items: the cell; detail: the limit
        "started too many processes or threads (the system refused the rest)",
        _in_notebook(
            lambda n: (
                f"{_listed(n)} started too many processes or threads: past {n.detail}, the system refused the rest"
            )
        ),
    )
    OUT_OF_MEMORY = (  # items: the cell; detail: the limit
        "ran out of memory (the kernel's whole process tree is capped)",
        _in_notebook(lambda n: f"{_listed(n)} ran out of memory: the kernel's processes held more than {n.detail}"),
    )
    KERNEL_STOPPED = (  # items: the cell; detail: why the kernel stopped
        "stopped their kernel (the cells after it score 0)",
        _in_notebook(lambda n: f"{n.detail} ({_listed(n)}); the cells after it score 0"),
    )

    @property
    def lists_items(self) -> bool:
        """True when a note of this kind lists names the class report counts ("10 each")."""
        return self in (NoteKind.LEFT_OUT, NoteKind.NOT_IN_ASSIGNMENT)


class FindingKind(_Kind):
    """One member per reason to withhold a grade; its value is (short phrase, how to word one finding)."""

    FORGING_METHOD = (  # detail: the cell; items: the special methods it names
        "defined a special method that can make a wrong value pass a check",
        lambda f: f"{f.detail} defines {_listed(f)}, which can make a wrong value pass a check",
    )
    HIDDEN_CODE_SHOWN = (
        "showed hidden test code in an output (cut)",
        lambda f: f"the output of {_listed(f)} repeated hidden test code (cut)",
    )
    UNREADABLE_ANSWER = (  # items: the test cell; detail: what was wrong with the answer
        "sent an answer the grader could not read",
        lambda f: f"the kernel's answer to {_listed(f)} could not be read ({f.detail})",
    )
    TEST_TENSOR_CHANGED = (  # detail: what the kernel tried to change; items: the test cell
        "changed a tensor the test made (refused)",
        lambda f: (
            f"while {_listed(f)} ran, the kernel tried to change {f.detail} (refused: the test's tensors are read-only to the student's code)"
        ),
    )
    ANSWER_REFUSED = (  # detail: what the answer did; items: what the guard refused
        "sent an answer the guard refused",
        lambda f: f"the answer {f.detail} (refused: {_listed(f)})",
    )
    FORGED_FACT = (  # detail: what the check saw forged; items: the test cell
        "forged a fact the checks read in their kernel",
        lambda f: f"{_listed(f)} scored 0: {f.detail}",
    )
    GUARD_SAW = (  # detail: what the kernel's guard saw; items: the graded cell it followed
        "changed what the checks rely on",
        lambda f: f"{f.detail} (first seen after {_listed(f)})",
    )
    FOREIGN_LOG_LINE = (
        "wrote into the guard's log",
        lambda f: "the guard's log holds a line the guard did not write",
    )
    GUARD_NEVER_ARMED = (
        "kept the grading guard from arming",
        lambda f: "the grading guard was never armed",
    )
    LOG_LOST_RECORDS = (
        "made the guard's log lose records",
        lambda f: "the guard's log lost records (it was closed or redirected)",
    )
    PROBE_UNANSWERED = (  # items: the graded cell after which the check went unanswered
        "replaced the audit machinery",
        lambda f: (
            f"the integrity check got no answer after {_listed(f)}"
            " (the audit machinery was replaced, or the guard's log redirected)"
        ),
    )
    LOG_TAMPERED = (  # detail: what is wrong with the log file the grader read
        "tampered with the guard's log file",
        lambda f: f"the guard's log {f.detail}",
    )


def texts(values: tuple[Note, ...] | tuple[Finding, ...]) -> tuple[str, ...]:
    """The sentences of notes or findings, in order."""
    return tuple(value.text for value in values)
