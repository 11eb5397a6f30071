"""What reaches nbgrader from a submission folder, and the notes that say what changed."""

import copy
import os
import threading

import nbformat
import pytest
from nbgrader.utils import parse_utc

from gradekit.core.cell_ids import cells_by_grade_id, grade_id
from gradekit.core.notes import FindingKind, Note, NoteKind, texts
from gradekit.grading import intake as intake_module
from gradekit.grading.intake import forging_methods, repair, take_in, timestamp_problem

pytestmark = pytest.mark.unit

NOTEBOOK = "020_leaves"


@pytest.fixture
def release(course):
    return course.release_dir


def _grade_ids(notebook):
    return [grade_id(c) for c in notebook.cells if grade_id(c)]


def _submit(folder, release, **files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_only_assignment_notebooks_and_the_timestamp_are_kept(tmp_path, release):
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    folder = _submit(
        tmp_path, release, **{f"{NOTEBOOK}.ipynb": released, "torch.py": "", "timestamp.txt": "2026-11-01 10:00:00"}
    )
    intake = take_in(folder, release)
    assert intake.problem is None
    assert [name for name, _ in intake.notebooks] == [NOTEBOOK]
    assert Note(NoteKind.NOT_IN_ASSIGNMENT, "", items=("torch.py",)) in intake.notes
    intake.write(tmp_path / "out")
    kept = [f"{NOTEBOOK}.ipynb", "submission_secret.txt", "timestamp.txt"]  # the secret, missing, was made
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == kept


def test_the_submission_secret_travels_with_the_notebooks(tmp_path, release):
    """nbgrader's release_feedback names the feedback after it, so it must reach the graded copy."""
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    folder = _submit(tmp_path / "in", release, **{f"{NOTEBOOK}.ipynb": released, "submission_secret.txt": "ab12" * 32})
    intake = take_in(folder, release)
    assert intake.secret == "ab12" * 32 and not any("submission_secret" in note.text for note in intake.notes)
    intake.write(tmp_path / "out")
    assert (tmp_path / "out" / "submission_secret.txt").read_text() == "ab12" * 32


def test_a_forged_submission_secret_is_dropped(tmp_path, release):
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    folder = _submit(tmp_path, release, **{f"{NOTEBOOK}.ipynb": released, "submission_secret.txt": "../x" * 500})
    assert take_in(folder, release).secret is None


def test_an_unreadable_notebook_is_left_out_with_a_note(tmp_path, release):
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    folder = _submit(tmp_path, release, **{f"{NOTEBOOK}.ipynb": released, "010_history.ipynb": "{not json"})
    intake = take_in(folder, release)
    assert [name for name, _ in intake.notebooks] == [NOTEBOOK]
    (unreadable,) = [note for note in intake.notes if note.kind is NoteKind.UNREADABLE]
    assert unreadable.notebook == "010_history" and unreadable.text.startswith("010_history.ipynb cannot be read")


def test_nothing_gradable_is_a_problem_not_an_exception(tmp_path, release):
    assert take_in(_submit(tmp_path / "a", release), release).problem == "the submission folder is empty"
    assert "no gradable notebook" in take_in(_submit(tmp_path / "b", release, **{"x.txt": "hi"}), release).problem
    assert "timestamp.txt" in take_in(_submit(tmp_path / "c", release, **{"timestamp.txt": "soon"}), release).problem


def test_symbolic_links_are_refused_unread(tmp_path, release):
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    classmate = _submit(
        tmp_path / "classmate", release, **{"010_history.ipynb": (release / "010_history.ipynb").read_text()}
    )
    course_file = _submit(tmp_path / "course", release, **{"gradebook.db": "grades"}) / "gradebook.db"
    folder = _submit(tmp_path / "student" / "autograd", release, **{f"{NOTEBOOK}.ipynb": released})
    (folder / "010_history.ipynb").symlink_to(classmate / "010_history.ipynb")
    (folder / "timestamp.txt").symlink_to(course_file)
    (folder / "notes").symlink_to(tmp_path / "course")
    intake = take_in(folder, release)
    assert intake.problem is None and [name for name, _ in intake.notebooks] == [NOTEBOOK]
    assert intake.timestamp is not None and "grades" not in intake.timestamp  # made, not read through the link
    assert (
        f"010_history.ipynb is a symbolic link to {str(classmate / '010_history.ipynb')!r}: refused, not followed; it scores 0"
        in texts(intake.notes)
    )
    links = [note for note in intake.notes if note.kind is NoteKind.SYMBOLIC_LINK]
    assert sorted(note.items for note in links) == [("010_history.ipynb",), ("notes",), ("timestamp.txt",)]
    assert [note.notebook for note in links if note.notebook] == ["010_history"]
    assert not any(note.kind is NoteKind.LEFT_OUT and "010_history" in note.items for note in intake.notes)


def _taken_in_promptly(folder, release):
    """take_in in a thread that must finish within seconds: a read that waits on a FIFO would hang forever."""
    taken = []
    worker = threading.Thread(target=lambda: taken.append(take_in(folder, release)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert taken, "intake is still waiting on a file"
    return taken[0]


def test_a_fifo_or_a_huge_file_under_a_notebooks_name_is_left_out_unread(tmp_path, release):
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    folder = _submit(tmp_path, release, **{f"{NOTEBOOK}.ipynb": released})
    os.mkfifo(folder / "010_history.ipynb")
    os.mkfifo(folder / "submission_secret.txt")
    with open(folder / "021_cotangents.ipynb", "wb") as huge:  # sparse: 2 GiB claimed, nothing written
        huge.truncate(2**31)
    intake = _taken_in_promptly(folder, release)
    assert intake.problem is None and [name for name, _ in intake.notebooks] == [NOTEBOOK]
    assert intake.secret is None
    unreadable = {note.notebook: note.detail for note in intake.notes if note.kind is NoteKind.UNREADABLE}
    assert unreadable == {
        "010_history": "RefusedFile: 010_history.ipynb is not a regular file",
        "021_cotangents": f"RefusedFile: 021_cotangents.ipynb holds {2**31} bytes, more than the {2**25} allowed",
    }
    assert not any(note.kind is NoteKind.LEFT_OUT and "010_history" in note.items for note in intake.notes)


def test_a_fifo_timestamp_is_a_problem_not_a_hang(tmp_path, release):
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    folder = _submit(tmp_path, release, **{f"{NOTEBOOK}.ipynb": released})
    os.mkfifo(folder / "timestamp.txt")
    intake = _taken_in_promptly(folder, release)
    assert intake.problem == "timestamp.txt cannot be read: timestamp.txt is not a regular file"


def test_a_link_swapped_in_after_the_listing_is_not_followed(tmp_path, release, monkeypatch):
    """The listing refuses links; the read refuses one that appears between the listing and the open."""
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    classmate = _submit(
        tmp_path / "classmate", release, **{"010_history.ipynb": (release / "010_history.ipynb").read_text()}
    )
    folder = _submit(tmp_path / "student", release, **{f"{NOTEBOOK}.ipynb": released})
    (folder / "010_history.ipynb").symlink_to(classmate / "010_history.ipynb")
    monkeypatch.setattr(intake_module, "_leads_elsewhere", lambda path, home: False)  # the listing saw a file
    intake = take_in(folder, release)
    assert [name for name, _ in intake.notebooks] == [NOTEBOOK]
    (unreadable,) = [note for note in intake.notes if note.kind is NoteKind.UNREADABLE]
    assert unreadable.notebook == "010_history" and unreadable.detail.startswith("OSError: [Errno 40]")


def test_a_linked_submission_folder_is_refused(tmp_path, release):
    real = _submit(
        tmp_path / "alice" / "autograd", release, **{f"{NOTEBOOK}.ipynb": (release / f"{NOTEBOOK}.ipynb").read_text()}
    )
    (tmp_path / "mallory").symlink_to(tmp_path / "alice")
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "autograd").symlink_to(real)
    for student in ("mallory", "eve"):
        assert (
            take_in(tmp_path / student / "autograd", release).problem
            == "the submission folder is a symbolic link: refused, not followed"
        )


def test_an_unreadable_timestamp_is_named(tmp_path):
    (tmp_path / "timestamp.txt").write_text("not a date")
    assert "timestamp.txt does not hold a date" in timestamp_problem(tmp_path)
    (tmp_path / "timestamp.txt").write_text("2026-11-01 10:00:00.000000 UTC")
    assert timestamp_problem(tmp_path) is None


def test_repair_puts_back_deleted_tests_and_disarms_copies(release):
    original = nbformat.read(release / f"{NOTEBOOK}.ipynb", as_version=4)
    student = copy.deepcopy(original)
    test = cells_by_grade_id(student)["test_chain_gradients"]
    student.cells.remove(test)
    answer = cells_by_grade_id(student)["answer_why_grad_is_none"]
    student.cells.append(copy.deepcopy(answer))
    notes = []
    repaired = repair(student, original, NOTEBOOK, notes)
    assert _grade_ids(repaired) == _grade_ids(original)
    assert sorted(note.kind.name for note in notes) == ["CELL_PUT_BACK", "SECOND_COPY"]
    assert Note(NoteKind.CELL_PUT_BACK, NOTEBOOK, items=("test_chain_gradients",)) in notes


def test_repair_restores_a_renamed_grade_id_from_the_cell_id(release):
    original = nbformat.read(release / f"{NOTEBOOK}.ipynb", as_version=4)
    student = copy.deepcopy(original)
    renamed = cells_by_grade_id(student)["test_can_require_grad"]
    renamed.metadata["nbgrader"]["grade_id"] = "free_points"
    notes = []
    assert _grade_ids(repair(student, original, NOTEBOOK, notes)) == _grade_ids(original)
    assert texts(tuple(notes)) == (
        f"{NOTEBOOK}: cell 'free_points' had its grade id changed; restored to 'test_can_require_grad'",
    )


def test_an_untouched_release_needs_no_repair(release):
    original = nbformat.read(release / f"{NOTEBOOK}.ipynb", as_version=4)
    notes = []
    repair(copy.deepcopy(original), original, NOTEBOOK, notes)
    assert notes == []


def test_special_methods_that_forge_comparisons_are_findings(release):
    original = nbformat.read(release / f"{NOTEBOOK}.ipynb", as_version=4)
    student = copy.deepcopy(original)
    answer = cells_by_grade_id(student)["answer_can_require_grad"]
    answer.source = "Agreeable = type('Agreeable', (), {'__eq__': lambda self, other: True})\n"
    (finding,) = forging_methods(student, original, NOTEBOOK)
    assert (finding.kind, finding.notebook, finding.items) == (FindingKind.FORGING_METHOD, NOTEBOOK, ("__eq__",))
    assert (
        finding.text == f"{NOTEBOOK}: answer_can_require_grad defines __eq__, which can make a wrong value pass a check"
    )
    assert forging_methods(original, original, NOTEBOOK) == []


def test_a_submission_without_a_timestamp_gets_one_from_its_notebooks_with_a_note(tmp_path, release):
    released = (release / f"{NOTEBOOK}.ipynb").read_text()
    folder = _submit(tmp_path / "student" / "autograd", release, **{f"{NOTEBOOK}.ipynb": released})
    os.utime(folder / f"{NOTEBOOK}.ipynb", (1_700_000_000, 1_700_000_000))
    intake = take_in(folder, release)
    assert intake.timestamp == "2023-11-14 22:13:20.000000 UTC"
    assert parse_utc(intake.timestamp)  # nbgrader reads it back
    (note,) = [note for note in intake.notes if note.kind is NoteKind.RECORD_MADE]
    assert note.detail == intake.timestamp and note.items == ("timestamp.txt", "submission_secret.txt")
    assert intake.secret is not None and len(intake.secret) == 32
    intake.write(tmp_path / "out")
    assert (tmp_path / "out" / "timestamp.txt").read_text() == intake.timestamp
    assert (tmp_path / "out" / "submission_secret.txt").read_text() == intake.secret


def test_stamping_keeps_what_is_there_and_writes_through_no_link(tmp_path):
    course_file = tmp_path / "gradebook.db"
    course_file.write_text("grades")
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "timestamp.txt").symlink_to(course_file)
    intake_module.stamp(folder)
    assert course_file.read_text() == "grades"
    assert len((folder / "submission_secret.txt").read_text()) == 32
    (folder / "timestamp.txt").unlink()
    (folder / "timestamp.txt").write_text("soon")
    intake_module.stamp(folder)
    assert (folder / "timestamp.txt").read_text() == "soon"
