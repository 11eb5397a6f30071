"""Notes group by their kind, never by their wording: every kind groups under its own phrase."""

import pytest

from gradekit.core.notes import Note, NoteKind
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status
from gradekit.report.note_kinds import note_groups

pytestmark = pytest.mark.unit


def row(student, *notes):
    return Outcome(student_id=student, status=Status.GRADED, message="", grades=None, notes=notes)


def example(kind: NoteKind) -> Note:
    """A note of `kind` as intake or the grader makes it (names, a detail, a notebook)."""
    return Note(kind, "010_history", "a reason", ("answer_f", "test_f"))


@pytest.mark.parametrize("kind", list(NoteKind), ids=lambda kind: kind.name)
def test_every_kind_groups_alone_under_its_phrase(kind):
    (group,) = note_groups((row("ada", example(kind)), row("ben", example(kind))))
    assert group.kind is kind and group.students == ("ada", "ben")
    assert group.summary.startswith(f"2 submissions {kind.phrase}")
    assert all(note.text for _, note in group.notes)


def test_the_phrases_tell_every_kind_apart():
    phrases = [kind.phrase for kind in NoteKind]
    assert len(set(phrases)) == len(phrases) and all(phrases)


def test_rewording_a_note_does_not_move_it():
    """The group comes from the kind: two notes of one kind with nothing in common in their words still share it."""
    first = Note(NoteKind.NOT_RUN, "010_history", "the answer could not be read", ("test_f",))
    second = Note(NoteKind.NOT_RUN, "020_leaves", "a reply too large", ("test_g",))
    (group,) = note_groups((row("ada", first), row("ben", second)))
    assert group.kind is NoteKind.NOT_RUN and [note for _, note in group.notes] == [first, second]


def test_groups_count_submissions_once_and_the_widest_comes_first():
    left_out = Note(NoteKind.LEFT_OUT, "", items=("n1", "n2"))
    rows = (
        row("a", left_out, Note(NoteKind.REORDERED, "n1")),
        row("b", Note(NoteKind.LEFT_OUT, "", items=("n1",))),
        row("c", left_out, Note(NoteKind.REORDERED, "n3"), Note(NoteKind.REORDERED, "n4")),
    )
    groups = note_groups(rows)
    assert [g.summary for g in groups] == [
        "3 submissions left out notebooks (they score 0): 1 to 2 each",
        "2 submissions reordered cells (graded in the submitted order)",
    ]
    assert groups[1].students == ("a", "c") and len(groups[1].notes) == 3


def test_only_listing_notes_count_their_items():
    (listing,) = note_groups((row("a", Note(NoteKind.NOT_IN_ASSIGNMENT, "", items=("torch.py", "x.txt"))),))
    assert listing.summary.endswith(": 2 each")
    (single,) = note_groups((row("a", Note(NoteKind.UNKNOWN_CELL, "010_history", items=("mine",))),))
    assert single.item_counts == () and ":" not in single.summary
