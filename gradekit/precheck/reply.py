"""What a pre-check tells the student: per test cell the points and the diagnosis, and never a line of hidden test code.

Only values leave: the points from the gradebook record, the misconception ids
a failed check named, and the one line it said, in the check's own words. No
cell source and no output beyond that line is read, and of a traceback only
its last line, which is that line as the check raised it.

No text the student's code wrote is said back. Were it echoed, the cut of a
hidden test line (`CUT_NOTICE`) would tell a student who raises or returns a
guessed line whether the guess is one: so the message of an error their code
raised is left out (the reply names its built-in type, and says their own run
of the cell shows the message), a quoted value longer than any hidden line
could be is shortened, a class of the student's own is not named, and a
"not graded" or "held for a TA" reply says the grader's fixed words only.
What is left is cut wherever it repeats a line of the hidden tests, and the
whole reply is checked once more before it is sent (`leaked_lines`).
"""

from __future__ import annotations

import builtins
import json
import re

import nbformat
from nbformat import NotebookNode

from gradekit.core.cell_ids import grade_id
from gradekit.core.diagnoses import ANSI, TAG, named_misconceptions, one_line
from gradekit.core.notes import FindingKind
from gradekit.core.status import ReplyStatus, Status
from gradekit.grading.hidden_lines import CUT_NOTICE, SHORTEST_SECRET, hidden_test_lines
from gradekit.grading.submission_grader import GradedSubmission
from gradekit.grading.task_budget import PAST_BUDGET
from gradekit.sandbox.crossing import REFUSAL_TYPE

# Errors raised in the kit's own words: a check's verdict (autograd_checks.py), a cell past its time limit (the
# grader). Any other error, a bare assert's included, may carry a message the student's code wrote.
CHECK_ERRORS = frozenset({"Diagnosis", "Forgery", "CellOutOfTime"})
# Errors of the kit whose message can quote the student's kernel: named by what they mean, never quoted.
KIT_ERRORS = {
    "CrossingError": "a reply of your kernel that the grader could not read (CrossingError)",
    REFUSAL_TYPE: f"a refusal to take its value back to the grader ({REFUSAL_TYPE})",
}
OWN_RUN = "its message is what your own run of the cell shows"
# "<answer> raised <type>: <the student's message>", as call_answer words an error of the student's code.
STUDENT_RAISED = re.compile(r"\b(?P<name>[A-Za-z_][\w.]*) raised (?P<type>[A-Za-z_]\w*)(?::|$)")
# A quoted value (a repr) in a check's words: a string the student's code returned may sit inside.
QUOTED = re.compile(r"""(?<!\w)(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")(?!\w)""")
QUOTE_LIMIT = SHORTEST_SECRET - 1  # too short to hold a hidden test line whole
SHORTENED = "'...'"
# How a check shows an object that stayed in the student's kernel: its type's name is theirs to choose.
KERNEL_OBJECT = re.compile(r"<(?P<type>[^<>]{0,120}) in the student's kernel>")
# How expect_tensor names a tensor subclass the student's code returned (the class and its name are theirs).
TENSOR_SUBCLASS = re.compile(r"\bnot the subclass [A-Za-z_]\w*")
# Findings the pre-check does not pass on: saying that a cut was made would tell whether a printed guess was a hidden line.
UNTOLD_FINDINGS = frozenset({FindingKind.HIDDEN_CODE_SHOWN})


def secret_lines(source_notebook: NotebookNode) -> frozenset[str]:
    """The hidden test lines of a trusted source notebook, with their spacing made single as the one-line texts have it."""
    return frozenset(" ".join(line.split()) for line in hidden_test_lines(source_notebook))


def graded_test_cells(source_notebook: NotebookNode) -> tuple[tuple[str, float], ...]:
    """(grade id, points) of every autograded test cell of the source notebook, in order."""
    found = []
    for cell in source_notebook.cells:
        grading = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and grading.get("grade") and not grading.get("solution"):
            found.append((grading["grade_id"], float(grading.get("points") or 0)))
    return tuple(found)


def cut_secrets(text: str, secrets: frozenset[str]) -> str:
    """`text` with every repeat of a hidden test line replaced by the grader's notice."""
    for line in secrets:
        if len(line) >= SHORTEST_SECRET and line in text:
            text = text.replace(line, CUT_NOTICE)
    return text


def leaked_lines(reply: dict, secrets: frozenset[str]) -> list[str]:
    """The hidden test lines that appear anywhere in the reply as it will be sent (an empty list for a sound reply)."""
    sent = json.dumps(reply, ensure_ascii=False)
    words = " ".join(sent.split())
    return sorted(line for line in secrets if len(line) >= SHORTEST_SECRET and (line in sent or line in words))


def student_reply(
    notebook: str, graded: GradedSubmission, source_notebook: NotebookNode, secrets: frozenset[str]
) -> dict:
    """The reply for one graded notebook; `source_notebook` is the trusted copy with its points and hidden tests."""
    if graded.status is Status.GRADER_ERROR:
        return grader_error_reply()
    if graded.status is Status.FAILED and graded.message.startswith(PAST_BUDGET):
        return {
            "status": ReplyStatus.NOT_GRADED,
            "message": "Grading this notebook ran past the pre-check's time limit and was stopped, so it would "
            "score nothing. Look for code that runs for a long time or never ends, then pre-check again.",
            "cells": [],
        }
    if graded.status is Status.FAILED or graded.record is None:
        # The grader's message can quote what nbgrader met in the notebook: only fixed words go back.
        return {
            "status": ReplyStatus.NOT_GRADED,
            "message": "The grader could not grade this notebook as it is (it cannot be read as a notebook, or "
            "nbgrader stopped on it), so it would score nothing. Open it, run every cell, save it and pre-check again.",
            "cells": [],
        }
    told = [finding for finding in graded.findings if finding.kind not in UNTOLD_FINDINGS]
    if graded.status is Status.FLAGGED and told:
        # Each finding in the grader's fixed phrase: its details can name what the student's code did or wrote.
        phrases = "; ".join(dict.fromkeys(finding.kind.phrase for finding in told))
        return {
            "status": ReplyStatus.HELD_FOR_A_TA,
            "message": "The grader would hold this notebook for a TA to look at, so the pre-check shows no points: "
            f"the notebook {phrases}.",
            "cells": [],
        }
    cells = _cell_replies(notebook, graded, source_notebook, secrets)
    return {
        "status": ReplyStatus.GRADED,
        "message": "",
        "score": sum(cell["points"] for cell in cells),
        "max_score": sum(cell["max_points"] for cell in cells),
        "cells": cells,
    }


def grader_error_reply(counted: bool = False) -> dict:
    """The reply when the grader, not the notebook, failed: nothing is scored; not counted, unless the day's refunds are used."""
    if counted:
        return {
            "status": ReplyStatus.GRADER_ERROR,
            "message": "The pre-check failed on the grader's side. It counted as a pre-check all the same: only a "
            "few grader failures a day are given back, and you have had them today.",
            "cells": [],
        }
    return {
        "status": ReplyStatus.GRADER_ERROR,
        "message": "The pre-check failed on the grader's side, not because of your notebook. "
        "It was not counted: try again in a minute.",
        "cells": [],
    }


def withheld_reply() -> dict:
    """The reply held back because it would have repeated hidden test code: only the notebook's run can put it there."""
    return {
        "status": ReplyStatus.NOT_SHOWN,
        "message": "The grader's reply to this notebook would have repeated a line of the hidden tests, so it is not "
        "shown. Text your notebook's code wrote ends up in that reply, so the check counted.",
        "cells": [],
    }


def unbuilt_reply() -> dict:
    """The reply when what the notebook's graded run left could not be turned into a reply."""
    return {
        "status": ReplyStatus.NOT_SHOWN,
        "message": "The pre-check could not read the outputs your notebook's run left in the graded copy, so it shows "
        "no points. Those outputs come from the notebook, so the check counted.",
        "cells": [],
    }


def not_run_reply() -> dict:
    """The reply to a check that was waiting or running when the service stopped."""
    return {
        "status": ReplyStatus.NOT_RUN,
        "message": "The pre-check service restarted before this check was finished. It was not run and not counted: "
        "press the pre-check again.",
        "cells": [],
    }


def _cell_replies(
    notebook: str, graded: GradedSubmission, source_notebook: NotebookNode, secrets: frozenset[str]
) -> list[dict]:
    records = {entry.name: entry for entry in graded.record.notebooks} if graded.record else {}
    scores = {grade.cell: grade.auto_score for grade in records[notebook].grades} if notebook in records else {}
    outputs = _graded_cells(notebook, graded)
    replies = []
    for cell_id, max_points in graded_test_cells(source_notebook):
        points = float(scores.get(cell_id) or 0.0)
        graded_cell = outputs.get(cell_id)
        misconceptions, said = diagnosis(graded_cell) if graded_cell is not None and points < max_points else ((), "")
        replies.append(
            {
                "cell": cell_id,
                "points": points,
                "max_points": max_points,
                "passed": points >= max_points,
                "misconceptions": list(misconceptions),
                "diagnosis": _tagged(misconceptions, cut_secrets(said, secrets)),
            }
        )
    return replies


def _tagged(misconceptions: tuple[str, ...], said: str) -> str:
    """The line as a student reads it in their notebook: the misconceptions named first, then what went wrong."""
    return " ".join([*(f"[misconception: {m}]" for m in misconceptions), said]).strip()


def diagnosis(cell: NotebookNode) -> tuple[tuple[str, ...], str]:
    """(the misconception ids, the one line) a failed test cell said, in the check's own words only."""
    error = next((output for output in cell.get("outputs", []) if output.get("output_type") == "error"), None)
    if error is None:
        # Nothing was raised, yet the cell lost its points: it wrote to stderr, which nbgrader scores zero.
        return (), f"the test cell wrote to stderr, which scores it zero; {OWN_RUN}"
    name = str(error.get("ename", ""))
    if name not in CHECK_ERRORS:
        # Not a check's verdict: an error of the student's code that reached the test itself.
        return (), f"the test stopped on an error: {_error_kind(name)}; {OWN_RUN}"
    # Whole until the student's parts are gone: cut short first, a quoted value could lose its closing quote.
    line = " ".join(ANSI.sub("", _uncut_message(error, name)).split())
    line = _without_student_message(line)
    line = KERNEL_OBJECT.sub(_kernel_object, QUOTED.sub(_bounded_quote, line))
    line = one_line(TENSOR_SUBCLASS.sub("not a subclass of its own", line))
    # A tag inside a quoted value is the student's value, not the check naming a misconception.
    return named_misconceptions(QUOTED.sub("", line)), TAG.sub("", line).strip()


def _uncut_message(error: NotebookNode, name: str) -> str:
    """The error's message as the check raised it: the last line of its traceback, else its value.

    The grader cuts a whole line of the value where it holds a hidden test
    line, and leaves the traceback alone; reading the value would make this
    reply depend on whether a message the student's code wrote held a hidden
    line. The student's part is dropped next and what is left is cut again.
    """
    trace = error.get("traceback") or []
    last = ANSI.sub("", str(trace[-1])) if trace else ""
    return last.removeprefix(f"{name}: ") if last.startswith(f"{name}: ") else str(error.get("evalue", ""))


def _without_student_message(line: str) -> str:
    """The line with the message of an error the student's code raised replaced by where to read it."""
    raised = STUDENT_RAISED.search(line)
    if raised is None:
        return line
    before = line[: raised.start()]
    closing = ")" if before.endswith("(") else ""  # the check's words wrap it: "<what it means> (<answer> raised ...)"
    return f"{before}{raised['name']} raised {_error_kind(raised['type'])}; {OWN_RUN}{closing}"


def _error_kind(name: str) -> str:
    if name in KIT_ERRORS:
        return KIT_ERRORS[name]
    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return name
    return "an exception of its own class"


def _bounded_quote(match: re.Match) -> str:
    return match[0] if len(match[0]) - 2 <= QUOTE_LIMIT else SHORTENED


def _kernel_object(match: re.Match) -> str:
    found = getattr(builtins, match["type"], None)
    shown = match["type"] if isinstance(found, type) else "an object of its own class"
    return f"<{shown} in the student's kernel>"


def _graded_cells(notebook: str, graded: GradedSubmission) -> dict:
    contents = dict(graded.files).get(f"{notebook}.ipynb")
    if contents is None:
        return {}
    autograded = nbformat.reads(contents.decode(), as_version=4)
    return {grade_id(cell): cell for cell in autograded.cells if grade_id(cell) and cell.cell_type == "code"}
