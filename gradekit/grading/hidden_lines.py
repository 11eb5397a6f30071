"""Lines of the course's hidden tests, and cutting them from whatever a cell shows.

No output may repeat a telling line of the hidden tests, however the answer got
hold of it: the Execute step cuts such lines (and the cut is a finding), and the
pre-check's reply does the same with what it returns.
"""

from __future__ import annotations

from nbformat import NotebookNode

from gradekit.authoring.cells import BEGIN_HIDDEN, END_HIDDEN

SHORTEST_SECRET = 25  # characters: shorter lines (an `expect(` or a `)`) are too common to tell anything
CUT_NOTICE = "[a line of the hidden tests was cut here by the grader]"


def hidden_test_lines(notebook: NotebookNode) -> set[str]:
    """The telling lines between BEGIN and END HIDDEN TESTS in the notebook's cells."""
    found = set()
    for cell in notebook.cells:
        inside = False
        for line in cell.get("source", "").splitlines():
            marker = line.strip()
            if marker == BEGIN_HIDDEN:
                inside = True
            elif marker == END_HIDDEN:
                inside = False
            elif inside and len(marker) >= SHORTEST_SECRET:
                found.add(marker)
    return found


def cut_hidden_lines(cell: NotebookNode, hidden: set[str]) -> bool:
    """Replace every output line that holds a hidden-test line; True if any was cut.

    Error tracebacks are left alone (nbgrader's own failures quote the test
    code there, and feedback shows only their last line); their message is not.
    """
    cut = False

    def clean(text: str) -> str:
        nonlocal cut
        if not any(secret in text for secret in hidden):  # the usual case: one scan per secret, in C
            return text
        lines = text.splitlines(keepends=True)
        kept = [CUT_NOTICE + "\n" if any(secret in line for secret in hidden) else line for line in lines]
        cut = cut or kept != lines
        return "".join(kept)

    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            output["text"] = clean(output.get("text", ""))
        elif output.get("output_type") == "error":
            output["evalue"] = clean(output.get("evalue", ""))
        for mime, value in output.get("data", {}).items():
            if mime.startswith("text/") and isinstance(value, str):
                output["data"][mime] = clean(value)
    return cut
