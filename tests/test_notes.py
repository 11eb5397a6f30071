"""Notes and findings are plain values: worded the same as before, compared by value, safe to pickle."""

import pickle

import pytest

from gradekit.core.notes import Finding, FindingKind, Note, NoteKind, texts

pytestmark = pytest.mark.unit

NB = "010_history"

# One note of each kind and the sentence a TA reads for it.
NOTES = {
    Note(NoteKind.LEFT_OUT, "", items=("020_leaves", "030_dynamic_graph")): (
        "not submitted (scores 0): 020_leaves, 030_dynamic_graph"
    ),
    Note(NoteKind.NOT_IN_ASSIGNMENT, "", items=("torch.py",)): "not graded (not part of the assignment): torch.py",
    Note(NoteKind.UNREADABLE, NB, "JSONDecodeError: Expecting value"): (
        "010_history.ipynb cannot be read as a notebook (JSONDecodeError: Expecting value); it scores 0"
    ),
    Note(NoteKind.SYMBOLIC_LINK, NB, "/x/y.ipynb", ("010_history.ipynb",)): (
        "010_history.ipynb is a symbolic link to '/x/y.ipynb': refused, not followed; it scores 0"
    ),
    Note(NoteKind.GRADE_ID_CHANGED, NB, items=("answer_x", "answer_f")): (
        "010_history: cell 'answer_x' had its grade id changed; restored to 'answer_f'"
    ),
    Note(NoteKind.UNKNOWN_CELL, NB, items=("mine",)): "010_history: unknown graded cell 'mine' is run as ordinary code",
    Note(NoteKind.SECOND_COPY, NB, items=("answer_f",)): (
        "010_history: a second copy of 'answer_f' is run as ordinary code"
    ),
    Note(NoteKind.CELL_PUT_BACK, NB, items=("test_f",)): (
        "010_history: deleted cell 'test_f' was put back from the release"
    ),
    Note(NoteKind.ANSWER_DELETED, NB, items=("answer_f",)): (
        "010_history: answer cell 'answer_f' was deleted; its tests score 0"
    ),
    Note(NoteKind.REORDERED, NB): "010_history: cells were reordered; graded in the submitted order",
    Note(NoteKind.NOT_RUN, NB, "bad reply", ("test_f",)): "010_history: the grader could not run test_f (bad reply)",
    Note(NoteKind.INTERRUPTED, NB, "60", ("test_f",)): (
        "010_history: test_f ran past the 60 s limit and was interrupted"
    ),
    Note(NoteKind.IDLE_SPENT, NB, "30", ("answer_f",)): (
        "010_history: answer_f sat sleeping or blocked after the submission's 30 s of idle time were spent, "
        "and was interrupted"
    ),
    Note(NoteKind.NBGRADER_FAILED, NB, "odd metadata"): (
        "010_history: nbgrader could not grade it (odd metadata); it scores 0"
    ),
    Note(NoteKind.KERNEL_STOPPED, NB, "the kernel died", ("test_f",)): (
        "010_history: the kernel died (test_f); the cells after it score 0"
    ),
    Note(NoteKind.RECORD_MADE, "", "2026-12-01 09:30:00.000000 UTC", ("timestamp.txt", "submission_secret.txt")): (
        "not handed in through the exchange: made timestamp.txt, submission_secret.txt (time: the notebooks' last "
        "change, 2026-12-01 09:30:00.000000 UTC), so that release_feedback can run"
    ),
    Note(NoteKind.NO_TREE_LIMIT, "", "no cgroup v2 nor v1 memory and pids hierarchies under /sys/fs/cgroup"): (
        "graded without a cgroup on each kernel's process tree (no cgroup v2 nor v1 memory and pids hierarchies "
        "under /sys/fs/cgroup): memory is capped per process, and the kernel may start no process"
    ),
    Note(NoteKind.TOO_MANY_PROCESSES, NB, "512", ("test_f",)): (
        "010_history: test_f started too many processes or threads: past 512, the system refused the rest"
    ),
    Note(NoteKind.OUT_OF_MEMORY, NB, "8 GiB", ("test_f",)): (
        "010_history: test_f ran out of memory: the kernel's processes held more than 8 GiB"
    ),
    Note(NoteKind.UNCONFINED, "", "bubblewrap is not installed"): (
        "graded without the kernel box, as the TA allowed: bubblewrap is not installed"
    ),
}

FINDINGS = {
    Finding(FindingKind.FORGING_METHOD, NB, "answer_f", ("__eq__", "__bool__")): (
        "010_history: answer_f defines __eq__, __bool__, which can make a wrong value pass a check"
    ),
    Finding(FindingKind.HIDDEN_CODE_SHOWN, NB, items=("test_f",)): (
        "010_history: the output of test_f repeated hidden test code (cut)"
    ),
    Finding(FindingKind.UNREADABLE_ANSWER, NB, "too large", ("test_f",)): (
        "010_history: the kernel's answer to test_f could not be read (too large)"
    ),
    Finding(FindingKind.TEST_TENSOR_CHANGED, NB, "the values of a tensor the test made", ("test_f",)): (
        "010_history: while test_f ran, the kernel tried to change the values of a tensor the test made "
        "(refused: the test's tensors are read-only to the student's code)"
    ),
    Finding(FindingKind.ANSWER_REFUSED, NB, "opened a protected file", ("open",)): (
        "010_history: the answer opened a protected file (refused: open)"
    ),
    Finding(FindingKind.FORGED_FACT, NB, "a hook was called by hand", ("test_f",)): (
        "010_history: test_f scored 0: a hook was called by hand"
    ),
    Finding(FindingKind.GUARD_SAW, NB, "torch.allclose was replaced", ("test_f",)): (
        "010_history: torch.allclose was replaced (first seen after test_f)"
    ),
    Finding(FindingKind.FOREIGN_LOG_LINE, NB): "010_history: the guard's log holds a line the guard did not write",
    Finding(FindingKind.GUARD_NEVER_ARMED, NB): "010_history: the grading guard was never armed",
    Finding(
        FindingKind.LOG_LOST_RECORDS, NB
    ): "010_history: the guard's log lost records (it was closed or redirected)",
    Finding(FindingKind.PROBE_UNANSWERED, NB, items=("test_f",)): (
        "010_history: the integrity check got no answer after test_f"
        " (the audit machinery was replaced, or the guard's log redirected)"
    ),
    Finding(
        FindingKind.LOG_TAMPERED, NB, "is not a regular file"
    ): "010_history: the guard's log is not a regular file",
}


def test_every_note_kind_is_worded_as_before():
    assert {note.kind for note in NOTES} == set(NoteKind), "a new kind needs its sentence here"
    assert {note: note.text for note in NOTES} == NOTES


def test_every_finding_kind_is_worded_and_names_its_notebook():
    assert {finding.kind for finding in FINDINGS} == set(FindingKind), "a new kind needs its sentence here"
    assert {finding: str(finding) for finding in FINDINGS} == FINDINGS
    assert all(finding.kind.phrase for finding in FINDINGS)


def test_a_link_that_stood_for_no_notebook_does_not_score_zero():
    link = Note(NoteKind.SYMBOLIC_LINK, "", "/course/gradebook.db", ("timestamp.txt",))
    assert link.text == "timestamp.txt is a symbolic link to '/course/gradebook.db': refused, not followed"


def test_notes_and_findings_cross_process_boundaries_unchanged():
    values = (*NOTES, *FINDINGS)
    assert pickle.loads(pickle.dumps(values)) == values
    assert texts(tuple(NOTES)) == tuple(NOTES.values())


def test_equal_events_are_equal_values():
    """A finding seen twice is one finding (notebook_findings keeps each once)."""
    first = Finding(FindingKind.GUARD_SAW, NB, "hooks were changed", ("test_f",))
    assert first == Finding(FindingKind.GUARD_SAW, NB, "hooks were changed", ("test_f",))
    assert len({first, Finding(FindingKind.GUARD_SAW, NB, "hooks were changed", ("test_f",))}) == 1
