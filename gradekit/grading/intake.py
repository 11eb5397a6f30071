"""Look at a submission before nbgrader does: keep what can be graded, repair what nbgrader would choke on.

Only the assignment's notebooks (with timestamp.txt and submission_secret.txt) go on to grading: a file
beside them could shadow a module the kernel imports (torch.py,
autograd_checks.py). A notebook that cannot be read is left out, so it scores
zero like a missing one, and the rest of the submission is still graded.
Cells are compared with the release by their nbgrader grade id:

* a graded or locked cell the student deleted is put back (nbgrader then
  restores its source, hidden tests included, and grades the answer);
* a second copy of a grade id, or a grade id the release does not know, would
  make nbgrader reject the notebook: a copy becomes ordinary code, a renamed
  cell gets its metadata back from the release cell with the same cell id;
* reordered cells are graded as submitted, with a note.

Nothing is followed out of the submission folder: a symbolic link (to a
classmate's notebook in the exchange, to a course file) is refused unread,
so a linked notebook scores zero like a missing one, with a note saying so.
Every file is read as a regular file of bounded size, without waiting: a
FIFO or an oversized notebook under an assignment's name is left out unread,
with a note, and scores zero.

A submission put in submitted/ by hand lacks the timestamp.txt and
submission_secret.txt nbgrader's submit writes, without which release_feedback
stops: both are made (the time from the notebooks' last change), with a note.

Every change is a note on the submission's row (a `Note` value, worded for the TA where it is shown). The code
the student wrote is also read for special methods that let a value pass a
comparison it should fail (`__eq__`, `__bool__`, `__torch_function__`, ...):
no exercise needs them, so naming one is a finding that flags the submission.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import datetime
import os
import secrets
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.utils import parse_utc

from gradekit.core.bounded_files import read_bounded, read_notebook
from gradekit.core.cell_ids import cells_by_grade_id
from gradekit.core.cell_ids import grade_id as grade_id_of
from gradekit.core.notes import Finding, FindingKind, Note, NoteKind

TIMESTAMP = "timestamp.txt"
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"  # nbgrader's default (Exchange.timestamp_format)
# nbgrader's submit writes it; release_feedback needs it to name the student's feedback, so it travels with the notebooks.
SECRET = "submission_secret.txt"
SECRET_CHARACTERS = frozenset("0123456789abcdef")
# Special methods that change what comparing, testing or type-checking a value means.
FORGING_METHODS = frozenset(
    {
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__bool__",
        "__len__",
        "__hash__",
        "__instancecheck__",
        "__subclasscheck__",
        "__torch_function__",
        "__torch_dispatch__",
        "__array_function__",
        "__array_ufunc__",
    }
)
QUIET_NAMES = frozenset({".ipynb_checkpoints", ".DS_Store", "__pycache__"})
MAX_TIMESTAMP_BYTES = 4096  # nbgrader writes one date of about 30 characters
MAX_SECRET_BYTES = 1024  # nbgrader writes a short hex string; a longer one is dropped anyway


@dataclasses.dataclass(frozen=True)
class Intake:
    """What will be graded, why anything else was set aside, and whether grading can happen at all."""

    notebooks: tuple[tuple[str, object], ...]  # (notebook name, repaired notebook)
    timestamp: str | None
    notes: tuple[Note, ...]
    problem: str | None  # set when nothing can be graded
    findings: tuple[Finding, ...] = ()  # what flags the submission for a TA
    secret: str | None = None

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=False)
        for name, notebook in self.notebooks:
            nbformat.write(notebook, folder / f"{name}.ipynb")
        if self.timestamp is not None:
            (folder / TIMESTAMP).write_text(self.timestamp)
        if self.secret is not None:
            (folder / SECRET).write_text(self.secret)


def take_in(submission: Path, release_dir: Path) -> Intake:
    submission = Path(submission)
    expected = sorted(path.stem for path in release_dir.glob("*.ipynb"))
    if submission.is_symlink() or submission.parent.is_symlink():  # the assignment folder or the student's
        return Intake((), None, (), "the submission folder is a symbolic link: refused, not followed")
    entries = sorted(p.name for p in submission.iterdir() if p.name not in QUIET_NAMES) if submission.is_dir() else []
    if not entries:
        return Intake((), None, (), "the submission folder is empty")
    links = [name for name in entries if _leads_elsewhere(submission / name, submission)]
    notes = [_refused_link_note(submission / name, expected) for name in links]
    present = [name for name in entries if name not in links]
    findings: list[Finding] = []
    timestamp, problem = _read_timestamp(submission) if TIMESTAMP in present else (None, None)
    if problem:
        return Intake((), None, (), problem)
    secret = submission_secret(submission) if SECRET in present else None
    extras = [
        n
        for n in present
        if n not in (TIMESTAMP, SECRET) and not (n.endswith(".ipynb") and n[: -len(".ipynb")] in expected)
    ]
    if extras:
        notes.append(Note(NoteKind.NOT_IN_ASSIGNMENT, "", items=tuple(extras)))
    notebooks = []
    for name in expected:
        path = submission / f"{name}.ipynb"
        if path.name not in present:
            continue
        try:
            student = read_notebook(path)  # never through a link, never past its size
        except Exception as error:
            notes.append(Note(NoteKind.UNREADABLE, name, _short(error)))
            continue
        release = nbformat.read(release_dir / f"{name}.ipynb", as_version=4)
        findings.extend(forging_methods(student, release, name))
        notebooks.append((name, repair(student, release, name, notes)))
    missing = [name for name in expected if f"{name}.ipynb" not in entries]
    if missing and notebooks:
        notes.append(Note(NoteKind.LEFT_OUT, "", items=tuple(missing)))
    made = [name for name in (TIMESTAMP, SECRET) if name not in present] if notebooks else []
    if TIMESTAMP in made:
        timestamp = last_change(submission, [name for name, _ in notebooks])
    if SECRET in made:
        secret = secrets.token_hex(16)  # release_feedback names the feedback with it; nobody else knows it
    if made:
        notes.append(Note(NoteKind.RECORD_MADE, "", (timestamp or "").strip(), tuple(made)))
    if not notebooks:
        found = ", ".join(entries)
        return Intake(
            (), None, tuple(notes), f"no gradable notebook of the assignment in the submission (found: {found})"
        )
    return Intake(tuple(notebooks), timestamp, tuple(notes), None, tuple(findings), secret)


def stamp(folder: Path) -> None:
    """Write what nbgrader's submit writes beside the notebooks (the time, in UTC, and a secret): for submissions the kit makes.

    A file already there is kept, and nothing is written through a link: a
    test's submission may hold its own (a bad timestamp, a link to a course file).
    """
    now = datetime.datetime.now(datetime.timezone.utc).strftime(TIMESTAMP_FORMAT)
    for name, text in ((TIMESTAMP, now), (SECRET, secrets.token_hex(16))):
        try:
            handle = os.open(Path(folder) / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(handle, "w") as out:
            out.write(text)


def last_change(submission: Path, notebooks: list[str]) -> str:
    """The latest change of the submission's notebooks, worded as nbgrader's submit writes a timestamp.

    A submission copied into submitted/ by hand has no timestamp.txt (nor the
    secret nbgrader's submit writes), without which `release_feedback` stops.
    """
    changed = max(os.lstat(submission / f"{name}.ipynb").st_mtime for name in notebooks)
    return datetime.datetime.fromtimestamp(changed, datetime.timezone.utc).strftime(TIMESTAMP_FORMAT)


def submission_secret(submission: Path) -> str | None:
    """The secret nbgrader's submit wrote, if it looks like one (a short hex string); else None, and feedback is not released."""
    try:
        text = read_bounded(submission / SECRET, MAX_SECRET_BYTES, keep_head=True).decode(errors="replace").strip()
    except OSError:
        return None
    return text if 0 < len(text) <= 256 and set(text) <= SECRET_CHARACTERS else None


def _leads_elsewhere(path: Path, folder: Path) -> bool:
    """True for a symbolic link, or anything whose real place is outside `folder`."""
    if path.is_symlink():
        return True
    real, home = os.path.realpath(path), os.path.realpath(folder)
    return not real.startswith(home.rstrip(os.sep) + os.sep)


def _refused_link_note(path: Path, expected: list[str]) -> Note:
    try:
        target = os.readlink(path)
    except OSError:
        target = os.path.realpath(path)
    notebook = path.stem if path.suffix == ".ipynb" and path.stem in expected else ""
    return Note(NoteKind.SYMBOLIC_LINK, notebook, target[:120], (path.name,))


def _read_timestamp(submission_dir: Path) -> tuple[str | None, str | None]:
    """(the text of the submission's timestamp.txt, why nbgrader could not use it); the text is None when there is no file."""
    try:
        text = read_bounded(Path(submission_dir) / TIMESTAMP, MAX_TIMESTAMP_BYTES).decode(errors="replace")
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, f"timestamp.txt cannot be read: {error.strerror or error}"
    try:
        parse_utc(text.strip())
    except Exception:
        return text, f"timestamp.txt does not hold a date nbgrader can read: {text.strip()[:60]!r}"
    return text, None


def timestamp_problem(submission_dir: Path) -> str | None:
    """Why the submission's timestamp.txt cannot be read, if it cannot (nbgrader itself would crash on it)."""
    return _read_timestamp(submission_dir)[1]


def repair(student: NotebookNode, release: NotebookNode, name: str, notes: list[Note]) -> NotebookNode:
    """The student's notebook with nbgrader's grade ids made whole again (see the module docstring)."""
    release_ids = cells_by_grade_id(release)
    by_cell_id = {cell.get("id"): cell for cell in release.cells}
    seen: set[str] = set()
    for cell in student.cells:
        grade_id = grade_id_of(cell)
        if not grade_id:
            continue
        if grade_id not in release_ids:
            original = by_cell_id.get(cell.get("id"))
            restored = grade_id_of(original) if original is not None else None
            if original is not None and restored and restored not in seen:
                cell.metadata["nbgrader"] = copy.deepcopy(original.metadata["nbgrader"])
                notes.append(Note(NoteKind.GRADE_ID_CHANGED, name, items=(grade_id, restored)))
            else:
                del cell.metadata["nbgrader"]
                notes.append(Note(NoteKind.UNKNOWN_CELL, name, items=(grade_id,)))
            grade_id = grade_id_of(cell)
        if grade_id in seen:
            del cell.metadata["nbgrader"]
            notes.append(Note(NoteKind.SECOND_COPY, name, items=(grade_id,)))
        elif grade_id:
            seen.add(grade_id)
    _restore_locked_cells(student, release, seen, name, notes)
    _note_order(student, release, name, notes)
    return student


def forging_methods(student: NotebookNode, release: NotebookNode, name: str) -> list[Finding]:
    """Findings for the special methods named in the cells nbgrader will not restore."""
    locked = {grade_id_of(cell) for cell in release.cells if cell.get("metadata", {}).get("nbgrader", {}).get("locked")}
    findings = []
    for cell in student.cells:
        if cell.get("cell_type") != "code" or grade_id_of(cell) in locked:
            continue
        named = sorted(_names_in(cell.get("source", "")) & FORGING_METHODS)
        if named:
            label = grade_id_of(cell) or f"cell {cell.get('id', '?')}"
            findings.append(Finding(FindingKind.FORGING_METHOD, name, label, tuple(named)))
    return findings


def _names_in(source: str) -> set[str]:
    """Every identifier and string constant in the code (the whole text, when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {word for word in FORGING_METHODS if word in source}
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.update(word for word in FORGING_METHODS if word in node.value)
    return names


def _restore_locked_cells(
    student: NotebookNode, release: NotebookNode, seen: set[str], name: str, notes: list[Note]
) -> None:
    previous = None
    for cell in release.cells:
        grade_id = grade_id_of(cell)
        if grade_id and grade_id not in seen:
            meta = cell.metadata["nbgrader"]
            if meta.get("locked") and not meta.get("solution"):
                student.cells.insert(_position_after(student, previous), copy.deepcopy(cell))
                notes.append(Note(NoteKind.CELL_PUT_BACK, name, items=(grade_id,)))
            elif meta.get("solution"):
                notes.append(Note(NoteKind.ANSWER_DELETED, name, items=(grade_id,)))
        if grade_id:
            previous = grade_id


def _position_after(student: NotebookNode, grade_id: str | None) -> int:
    for index, cell in enumerate(student.cells):
        if grade_id and grade_id_of(cell) == grade_id:
            return index + 1
    return 0


def _note_order(student: NotebookNode, release: NotebookNode, name: str, notes: list[Note]) -> None:
    wanted = [grade_id_of(cell) for cell in release.cells if grade_id_of(cell)]
    actual = [grade_id_of(cell) for cell in student.cells if grade_id_of(cell) in wanted]
    if actual != [grade_id for grade_id in wanted if grade_id in actual]:
        notes.append(Note(NoteKind.REORDERED, name))


def _short(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}"
