"""Every broken or hostile submission gets its exact outcome, and the cohort around them is graded whole."""

import ast
import dataclasses
import io
import os
import signal
import tempfile
from pathlib import Path

import nbformat
import pytest
from submission_cases import (
    CELL_TIMEOUT,
    HONEST,
    NOTE_PATHS,
    NOTEBOOKS,
    TARGET,
    Builder,
    Case,
    build_case,
    case_list,
    full_marks,
)

from gradekit.authoring.cells import BEGIN_HIDDEN, END_HIDDEN
from gradekit.authoring.release import new_workspace
from gradekit.core.cell_ids import cells_by_grade_id
from gradekit.core.notes import texts
from gradekit.core.status import Status
from gradekit.grading.cohort import grade_cohort, submitted_students
from gradekit.grading.executors import LocalExecutor
from gradekit.grading.gradebook import read_grades
from gradekit.grading.gradebook_records import read_record
from gradekit.grading.hidden_lines import hidden_test_lines
from gradekit.grading.output_limits import LimitOutputSize
from gradekit.grading.progress import Progress

pytestmark = pytest.mark.nbgrader

# KIT_CASES=name,name grades only those cases (with the honest student): a developer's inner loop.
CASES = tuple(
    case for case in case_list() if not os.environ.get("KIT_CASES") or case.name in os.environ["KIT_CASES"].split(",")
)


def graded_case(name: str) -> str:
    """`name`, where the cohort graded that case; a test about a case KIT_CASES left out is skipped instead."""
    if name not in {case.name for case in CASES}:
        pytest.skip(f"KIT_CASES leaves out {name}")
    return name


def case_folder(scratch, name: str) -> Path:
    """Where the cohort put case `name`'s graded notebooks (skipped as `graded_case` says)."""
    return scratch.autograded_dir / graded_case(name) / scratch.assignment_id


@pytest.fixture(scope="module")
def graded(course, manifest, tmp_path_factory):
    """One cohort: an honest student and every case, graded together with a short cell timeout."""
    narrow = manifest.only(list(NOTEBOOKS))
    scratch = new_workspace(course, tmp_path_factory.mktemp("cases"), NOTEBOOKS)
    # The exchange outside the course folder: kernels must not read it wherever it lies.
    scratch = dataclasses.replace(scratch, exchange_root=tmp_path_factory.mktemp("exchange-elsewhere"))
    for case in CASES:
        build_case(scratch, narrow, case)
    Builder(scratch, narrow, scratch.submitted_dir / HONEST / scratch.assignment_id).write()
    for note in NOTE_PATHS:  # left by an earlier run of a grader without the confinement
        Path(note).unlink(missing_ok=True)
    stream = io.StringIO()
    progress = Progress(len(submitted_students(scratch)), stream)
    temporary = tmp_path_factory.mktemp("temporary-folder")  # the grading's own, to see what it leaves there
    previous, tempfile.tempdir = tempfile.tempdir, str(temporary)
    try:
        result = grade_cohort(scratch, LocalExecutor(2), NOTEBOOKS, progress, cell_timeout=CELL_TIMEOUT)
    finally:
        tempfile.tempdir = previous
    LEFT_IN_THE_TEMPORARY_FOLDER[:] = sorted(entry.name for entry in temporary.iterdir())
    return scratch, narrow, {row.student_id: row for row in result.rows}, stream.getvalue()


LEFT_IN_THE_TEMPORARY_FOLDER: list[str] = []
PADDING = 2_000_000  # a notebook's own cells and metadata beside its outputs


def test_nothing_of_the_cohort_is_left_in_the_temporary_folder(graded):
    """Scratch courses with hidden tests, gradebook copies, kernel folders: all gone once grading returns."""
    assert LEFT_IN_THE_TEMPORARY_FOLDER == []


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_case_gets_its_exact_outcome(graded, case: Case):
    scratch, narrow, rows, _ = graded
    row, expected = rows[case.name], case.expected
    said = "\n".join((row.message, *texts(row.notes), *texts(row.findings)))
    assert row.status == expected.status, said
    for fragment in expected.says:
        assert fragment in said
    outputs = "".join(_outputs(scratch.autograded_dir / case.name))
    for fragment in expected.shows:
        assert fragment in outputs
    if expected.hides_the_tests:
        secrets = _hidden_strings(scratch)
        assert secrets and not [secret for secret in secrets if secret in said + outputs]
    if expected.status is Status.FAILED:
        assert row.grades is None and read_grades(scratch, case.name).missing
        return
    scores = {f"{cell.notebook}/{cell.cell}": cell.score for cell in row.grades.cells}
    points = full_marks(narrow)
    assert set(scores) == set(points)
    assert scores == {cell: 0 if cell in expected.zero_cells else full for cell, full in points.items()}
    _assert_withheld_exactly_when_flagged(read_record(scratch, case.name), expected)


def _outputs(folder: Path):
    """Every text a graded notebook of `folder` shows."""
    for path in sorted(folder.glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                shown = output.get("data", {}).get("text/plain", "")
                yield output.get("text", "") + output.get("evalue", "") + "".join(output.get("traceback", [])) + shown


def test_no_graded_notebook_outgrows_the_output_budget(graded):
    """Whatever a case displayed (eight images of 33 MB among them), its graded notebooks keep the budget."""
    scratch, _, _, _ = graded
    budget = LimitOutputSize(config=scratch.nbgrader_config).max_notebook_bytes
    sizes = {
        path.relative_to(scratch.autograded_dir): path.stat().st_size
        for path in scratch.autograded_dir.glob("*/*/*.ipynb")
    }
    assert sizes and not {path: size for path, size in sizes.items() if size > budget + PADDING}


def _hidden_strings(scratch) -> set[str]:
    """The string constants of the hidden tests (20 characters or more): the words a leak would carry."""
    found = set()
    for name in NOTEBOOKS:
        for cell in nbformat.read(scratch.source_dir / f"{name}.ipynb", as_version=4).cells:
            hidden = _hidden_region(cell.get("source", ""))
            for node in ast.walk(ast.parse(hidden)) if hidden else ():
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 20:
                    found.add(node.value)
    return found


def _hidden_region(source: str) -> str:
    lines = source.splitlines()
    marks = [index for index, line in enumerate(lines) if line.strip() in (BEGIN_HIDDEN, END_HIDDEN)]
    return "\n".join(lines[marks[0] + 1 : marks[1]]) if len(marks) == 2 else ""


def _assert_withheld_exactly_when_flagged(record, expected):
    """A flagged submission's attacked notebook waits for a TA; nothing else does."""
    for notebook in record.notebooks:
        withheld = expected.status is Status.FLAGGED and notebook.name == expected.attacked
        assert notebook.flagged == withheld, notebook.name
        assert all(grade.needs_manual_grade == withheld for grade in notebook.grades), notebook.name


def test_the_honest_student_beside_them_gets_full_marks(graded):
    _, narrow, rows, _ = graded
    honest = rows[HONEST]
    assert honest.status is Status.GRADED and not honest.notes and not honest.findings
    assert honest.grades.score == sum(full_marks(narrow).values())


def test_the_gradebook_holds_every_gradable_submission_and_nothing_else(graded):
    scratch, _, rows, progress = graded
    for student, row in rows.items():
        assert read_grades(scratch, student).missing == (row.status is Status.FAILED), student
    assert len(progress.strip().splitlines()) == len(rows)


def test_no_output_of_any_case_holds_a_line_of_the_hidden_tests(graded):
    """What feedback shows comes from graded notebooks: none may quote a hidden test, however obtained."""
    scratch = graded[0]
    hidden = set()
    for name in NOTEBOOKS:
        hidden |= hidden_test_lines(nbformat.read(scratch.source_dir / f"{name}.ipynb", as_version=4))
    assert hidden
    leaks = []
    for path in sorted(scratch.autograded_dir.glob("*/*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                shown = (
                    output.get("text", "")
                    + output.get("evalue", "")
                    + "".join(map(str, output.get("data", {}).values()))
                )
                leaks += [f"{path.parent.parent.name}: {line}" for line in hidden if line in shown]
    assert not leaks


def test_what_the_kernel_prints_during_a_check_never_reaches_the_test_cell(graded):
    """The answer prints what it found, then raises: the test cell shows the diagnosis only."""
    scratch = graded[0]
    notebook = nbformat.read(
        case_folder(scratch, "reads-the-test-from-the-kernel") / "010_history.ipynb",
        4,
    )
    outputs = cells_by_grade_id(notebook)["test_gradient_at"].outputs
    assert [output.output_type for output in outputs] == ["error"]
    assert outputs[0].evalue.startswith("gradient_at raised ValueError: ")
    assert len(outputs[0].evalue) < 1200  # the student's message crosses capped at 1,000 characters


def test_outputs_are_cut_to_size(graded):
    scratch, _, _, _ = graded
    notebook = case_folder(scratch, "prints-megabytes") / f"{TARGET}.ipynb"
    text = notebook.read_text()
    assert len(text) < 500_000 and "more characters cut by the grader" in text


def test_shadowing_files_never_reach_the_kernel(graded, course):
    scratch, _, _, _ = graded
    folder = case_folder(scratch, "shadowing-files")
    assert not (folder / "torch.py").exists() and not (folder / "numpy.py").exists()
    assert (folder / "autograd_checks.py").read_bytes() == (course.source_dir / "autograd_checks.py").read_bytes()


def test_no_file_of_the_students_own_but_notebooks_reaches_autograded(graded, course):
    """Formgrader serves autograded/ from the TA's origin: only notebooks, the course's files and the stamps get there."""
    scratch, _, _, _ = graded
    course_files = {path.name for path in course.source_dir.iterdir() if path.suffix != ".ipynb"}
    stamps = {"timestamp.txt", "submission_secret.txt"}
    released = {path.name for path in course.release_dir.glob("*.ipynb")}
    for folder in sorted(scratch.autograded_dir.glob(f"*/{scratch.assignment_id}")):
        others = {path.name for path in folder.iterdir()} - released - course_files - stamps
        assert others == set(), folder
    shadowed = case_folder(scratch, "shadowing-files")
    assert not (shadowed / "notes.html").exists() and not (shadowed / "figure.svg").exists()


def test_files_opened_in_c_code_are_refused_by_the_system(graded):
    """torch.from_file opens files without an audit event: Landlock refuses the course's files."""
    scratch, _, _, _ = graded
    notebook = nbformat.read(case_folder(scratch, "reads-course-files-from-c") / f"{TARGET}.ipynb", 4)
    printed = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
    assert "the gradebook stayed out of reach" in printed and "read the gradebook" not in printed


def test_no_kernel_reads_another_processes_environment(graded):
    scratch = graded[0]
    notebook = nbformat.read(
        case_folder(scratch, "reads-the-graders-environment-from-c") / "010_history.ipynb",
        4,
    )
    printed = "".join(output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", []))
    assert "other processes' environments: refused refused" in printed


def test_no_kernel_leaves_a_note_for_the_next(graded):
    """A kernel's /tmp is a tmpfs of its own box (Landlock keeps it out of /dev/shm): the note goes with the kernel."""
    scratch, _, _, _ = graded
    notebook = nbformat.read(
        case_folder(scratch, "writes-a-note-for-the-next-student") / f"{TARGET}.ipynb",
        4,
    )
    printed = "".join(o.get("text", "") for cell in notebook.cells for o in cell.get("outputs", []))
    shm, tmp = NOTE_PATHS
    assert f"left a note in {tmp}" in printed and f"could not leave a note in {shm}" in printed
    assert not any(Path(note).exists() for note in NOTE_PATHS)  # not on the machine (and the reader scores in full)


def test_no_process_outlives_its_kernel(graded):
    """The orphans of leaves-orphan-processes died with their kernel's process group, escapes included."""
    marker = f"/autograded/{graded_case('leaves-orphan-processes')}/"
    survivors = [pid for pid, target in _open_files() if marker in target]
    for pid in set(survivors):  # a failing run should not leave them for ten minutes
        os.kill(pid, signal.SIGKILL)
    assert not survivors


def _open_files():
    """(pid, target) for every file any process of this user holds open."""
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            for fd in fd_dir.iterdir():
                yield int(fd_dir.parent.name), os.readlink(fd)
        except OSError:  # gone, or not ours
            continue
