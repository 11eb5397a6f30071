"""Notebook scripts: the text a course lead edits, one per source notebook (solutions/notebooks/NNN_topic.py).

A script is plain Python in the percent format: each cell starts with a header
line, and the header says the cell's nbgrader role and grade id.

    # %% <grade_id>                                   read-only code: setup, helpers
    # %% demo <grade_id>                              read-only code that only shows something
    # %% answer <grade_id>                            autograded answer cell
    # %% test <grade_id> points=<n> [targets=<id>,...]  autograder tests worth n points
    # %% [markdown] <grade_id>                        read-only lesson text
    # %% [markdown] task <grade_id> points=<n>        a task: question and mark scheme
    # %% [markdown] answer <grade_id> points=<n>      a free-response answer a TA grades

A demo cell prints what the lesson demonstrates and defines nothing a test
reads: the sealed grader runs it where the student's code runs, and not again
on its own side.

`targets` lists, comma-separated without spaces, the misconceptions a test
cell is written to catch. A grade id is never `answer`, `test`, `task` or `demo`.

The body runs to the next header; trailing blank lines are not part of it.
Code bodies are verbatim. Markdown bodies are comments: `# text`, and `#` for
an empty line. An answer cell's body is the import of its reference functions
(`from solutions.reference.history import float64_leaf`), so the script runs
top to bottom against the reference and the answer text lives only there.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import re
from pathlib import Path

REFERENCE_PACKAGE = "solutions.reference"  # where answer cells import the reference from

HEADER_PREFIX = "# %%"
MARKDOWN_TAG = "[markdown]"
_GRADE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


class Role(enum.Enum):
    CODE = "code"
    DEMO = "demo"
    ANSWER = "answer"
    TEST = "test"
    LESSON = "lesson"
    TASK = "task"
    WRITTEN = "written"

    @property
    def is_markdown(self) -> bool:
        return self in (Role.LESSON, Role.TASK, Role.WRITTEN)

    @property
    def has_points(self) -> bool:
        return self in (Role.TEST, Role.TASK, Role.WRITTEN)


# (markdown?, role word) -> role; no word means a read-only cell.
_ROLES = {
    (False, None): Role.CODE,
    (False, "demo"): Role.DEMO,
    (False, "answer"): Role.ANSWER,
    (False, "test"): Role.TEST,
    (True, None): Role.LESSON,
    (True, "task"): Role.TASK,
    (True, "answer"): Role.WRITTEN,
}


class ScriptError(ValueError):
    """A script that does not follow the header grammar, with the line at fault."""


@dataclasses.dataclass(frozen=True)
class ScriptCell:
    role: Role
    grade_id: str
    body: str  # code verbatim, or the markdown text with its comment marks removed
    points: int | float | None = None
    targets: tuple[str, ...] = ()

    @property
    def required_points(self) -> int | float:
        """The points of a test, task or free-response cell, which the header grammar requires."""
        if self.points is None:
            raise ScriptError(f"{self.grade_id}: a {self.role.value} cell has no points")
        return self.points


def read_script(path: Path) -> tuple[ScriptCell, ...]:
    return parse_script(Path(path).read_text(), str(path))


def parse_script(text: str, where: str = "<script>") -> tuple[ScriptCell, ...]:
    body: list[str]
    cells, header, body, header_line = [], None, [], 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(HEADER_PREFIX):
            if header is not None:
                cells.append(_cell(header, body, f"{where}:{header_line}"))
            header, body, header_line = line, [], number
        elif header is None:
            if line.strip():
                raise ScriptError(f"{where}:{number}: text before the first `{HEADER_PREFIX}` header")
        else:
            body.append(line)
    if header is not None:
        cells.append(_cell(header, body, f"{where}:{header_line}"))
    _check_unique(cells, where)
    return tuple(cells)


def _cell(header: str, body: list[str], where: str) -> ScriptCell:
    role, grade_id, options = _parse_header(header, where)
    while body and not body[-1].strip():
        body.pop()
    text = _uncomment(body, where) if role.is_markdown else "\n".join(body)
    points = _points(options.pop("points", None), role, where)
    targets = tuple(options.pop("targets").split(",")) if "targets" in options and role is Role.TEST else ()
    if options:
        raise ScriptError(f"{where}: `{', '.join(options)}` is not an option of a {role.value} cell")
    return ScriptCell(role, grade_id, text, points, targets)


def _parse_header(header: str, where: str) -> tuple[Role, str, dict[str, str]]:
    words = header[len(HEADER_PREFIX) :].split()
    markdown = bool(words) and words[0] == MARKDOWN_TAG
    words = words[1:] if markdown else words
    plain = [w for w in words if "=" not in w]
    options = dict(w.split("=", 1) for w in words if "=" in w)
    role_word = plain[0] if len(plain) == 2 else None
    if len(plain) not in (1, 2) or (markdown, role_word) not in _ROLES:
        raise ScriptError(f"{where}: cannot read the header {header!r}")
    grade_id = plain[-1]
    if not _GRADE_ID.match(grade_id) or grade_id in ("answer", "test", "task", "demo"):
        raise ScriptError(f"{where}: {grade_id!r} is not a grade id")
    return _ROLES[(markdown, role_word)], grade_id, options


def _points(value: str | None, role: Role, where: str) -> int | float | None:
    if value is None:
        if role.has_points:
            raise ScriptError(f"{where}: a {role.value} cell needs points=<n>")
        return None
    if not role.has_points:
        raise ScriptError(f"{where}: a {role.value} cell has no points")
    number = float(value)
    return int(number) if number.is_integer() and "." not in value else number


def _uncomment(lines: list[str], where: str) -> str:
    text = []
    for line in lines:
        if line == "#":
            text.append("")
        elif line.startswith("# "):
            text.append(line[2:])
        else:
            raise ScriptError(f"{where}: a markdown line must start with '# ': {line!r}")
    return "\n".join(text)


def _check_unique(cells: list[ScriptCell], where: str) -> None:
    seen = set()
    for cell in cells:
        if cell.grade_id in seen:
            raise ScriptError(f"{where}: grade id {cell.grade_id!r} is used twice")
        seen.add(cell.grade_id)


def answer_import(cell: ScriptCell) -> tuple[str, tuple[str, ...]]:
    """The reference module and function names an answer cell's body imports."""
    statements = ast.parse(cell.body).body
    if len(statements) != 1 or not isinstance(statements[0], ast.ImportFrom):
        raise ScriptError(
            f"answer cell {cell.grade_id}: the body must be one `from {REFERENCE_PACKAGE}.<module> import ...`"
        )
    statement = statements[0]
    module = statement.module or ""  # None for a relative `from . import name`
    if not module.startswith(REFERENCE_PACKAGE + ".") or any(a.asname for a in statement.names):
        raise ScriptError(f"answer cell {cell.grade_id}: import reference functions by name from {REFERENCE_PACKAGE}")
    return module, tuple(alias.name for alias in statement.names)
