"""What a notebook's outputs may weigh: characters of text, and bytes of every MIME type per output and per notebook.

A cell can display anything (an image of 33 MB, an HTML page, a widget's JSON), and
whatever it displays ends in the autograded notebook, the feedback page and the grader's
memory. An output over its budget is replaced by a short note saying what was cut and
why; once a notebook has kept its budget, each later output is replaced the same way.
A cut stream keeps its head and its name (a cut stderr still counts as stderr), so a
test cell's score is what it would have been; every other output becomes plain text.

`LimitOutputSize` applies the limits to a notebook once it has run (plain `nbgrader
autograde` too); the kit's grader applies the same budget to each output as it arrives,
so its own memory stays bounded. This module imports nothing of the kit: the
configuration loads it by its path, so that plain nbgrader can use it.
"""

from __future__ import annotations

import json

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer

CUT_BY_THE_GRADER = "cut by the grader"  # in every note of a cut, so a reader (and a test) can find them
# What an output costs the notebook's budget besides its content: its entry in the notebook (about this
# many bytes as nbformat writes it), so a flood of empty outputs is held to the budget as a flood of text is.
ENTRY_BYTES = 100


def output_bytes(output: dict) -> int:
    """The bytes an output brings: its text, its data of every MIME type, its error and its metadata."""
    size = len(_encoded(output.get("text", "")))
    for value in output.get("data", {}).values():
        size += len(_encoded(value))
    size += len(_encoded(output.get("evalue", ""))) + sum(len(_encoded(line)) for line in output.get("traceback", []))
    metadata = output.get("metadata")
    return size + (len(_encoded(metadata)) if metadata else 0)


def _encoded(value: object) -> bytes:
    if isinstance(value, str):
        return value.encode(errors="replace")
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value).encode(errors="replace")
    return json.dumps(value, default=str).encode()


class OutputBudget:
    """Admits a notebook's outputs, in order, within `per_output` bytes each and `per_notebook` bytes in all."""

    def __init__(self, per_output: int, per_notebook: int):
        self.per_output, self.per_notebook = per_output, per_notebook
        self.kept = 0  # bytes of the outputs admitted so far
        self._last_cut: dict | None = None  # the note this budget made last, so a run of cuts leaves one

    def take(self, size: int, copies: int = 1) -> bool:
        """Count `copies` outputs of `size` bytes against the budget if they fit, else count nothing; whether they fit.

        Copies: an update of a display rewrites every output shown under its id, each kept in the notebook.
        """
        if size > self.per_output or size * copies > self.per_notebook - self.kept:
            return False
        self.kept += size * copies
        return True

    def admit(self, outputs: list, output: dict) -> None:
        """Append `output` to `outputs` when it fits; otherwise what is kept of it, with a note saying what was cut.

        A cut that follows a cut of the same kind at the end of `outputs` is dropped, so a
        flood of prints past the budget leaves one note, not one per print. An error is kept
        cut short, never dropped unless one already stands there: nbgrader scores a test cell
        by whether it has one, and by whether it wrote to stderr.
        """
        size = output_bytes(output)
        if self.take(size + ENTRY_BYTES):
            outputs.append(output)
            return
        room = max(min(self.per_output, self.per_notebook - self.kept), 0)
        cut = _cut(output, size, room, self._why(size + ENTRY_BYTES))
        last = self._last_cut
        if last is not None and outputs and outputs[-1] is last and _same_kind(last, cut):
            return
        self.kept += output_bytes(cut)
        self._last_cut = cut
        outputs.append(cut)

    def _why(self, size: int) -> str:
        if size > self.per_output:
            return f"an output may bring at most {self.per_output:,} bytes"
        return f"the notebook's outputs may bring at most {self.per_notebook:,} bytes in all"


def admitted(budget: OutputBudget, outputs: list) -> list:
    """`outputs` as `budget` admits them, in order."""
    kept: list = []
    for output in outputs:
        budget.admit(kept, output)
    return kept


def _same_kind(last: dict, cut: dict) -> bool:
    return (last.get("output_type"), last.get("name")) == (cut.get("output_type"), cut.get("name"))


def _cut(output: dict, size: int, room: int, why: str) -> dict:
    kind = output.get("output_type")
    note = f"[{_what(output)} of {size:,} bytes {CUT_BY_THE_GRADER}: {why}]"
    if kind == "stream":
        head = _head(output.get("text", ""), room // 4)  # characters of up to four bytes each
        return NotebookNode(output_type="stream", name=output.get("name", "stdout"), text=f"{head}\n... {note}\n")
    if kind == "error":
        ename = str(output.get("ename", "Error"))[:200]
        return NotebookNode(output_type="error", ename=ename, evalue=note, traceback=[f"{ename}: {note}"])
    cut = NotebookNode(output_type=kind or "display_data", data={"text/plain": note}, metadata={})
    if kind == "execute_result":
        cut["execution_count"] = output.get("execution_count")
    return cut


def _what(output: dict) -> str:
    kinds = sorted(output.get("data", {})) or [output.get("output_type", "output")]
    return "an output (" + ", ".join(str(kind)[:60] for kind in kinds[:4]) + ")"


def _head(text: object, characters: int) -> str:
    text = "".join(text) if isinstance(text, list) else str(text)
    return text[: max(characters, 0)]


class LimitOutputSize(NbGraderPreprocessor):
    """Cut any text output longer than `max_characters`, and any output of any MIME type past its byte budget.

    nbgrader's LimitOutput cuts by lines; this cuts one very long line too, and
    images, HTML, JSON and widget outputs by their bytes: a cut output says so.
    A cut stderr still counts as stderr.
    """

    max_characters = Integer(
        100_000, help="The most characters a text output (stream or text/* data) may keep; the rest is cut with a note."
    ).tag(config=True)
    max_output_bytes = Integer(
        2_000_000,
        help="The most bytes one output may bring, of every MIME type (an image, HTML, JSON, a widget's state, "
        "text); a bigger one is replaced by a note saying what was cut.",
    ).tag(config=True)
    max_notebook_bytes = Integer(
        8_000_000,
        help="The most bytes the outputs of one notebook may bring in all; once they have, each later output is "
        "replaced by a note (one per run of cut outputs), errors cut short but kept.",
    ).tag(config=True)

    def budget(self) -> OutputBudget:
        return OutputBudget(self.max_output_bytes, self.max_notebook_bytes)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        self._budget = self.budget()  # one per notebook: the limit in all counts across its cells
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                output["text"] = self._cut(output.get("text", ""))
            for mime, value in list(output.get("data", {}).items()):
                if mime.startswith("text/") and isinstance(value, str):
                    output["data"][mime] = self._cut(value)
        if "outputs" in cell:
            if not hasattr(self, "_budget"):  # a cell preprocessed on its own
                self._budget = self.budget()
            cell["outputs"] = admitted(self._budget, cell["outputs"])
        return cell, resources

    def _cut(self, text: str) -> str:
        if len(text) <= self.max_characters:
            return text
        return (
            text[: self.max_characters]
            + f"\n... [{len(text) - self.max_characters} more characters {CUT_BY_THE_GRADER}]\n"
        )
