import pytest

from gradekit.core.rows import CohortRow
from gradekit.core.status import Status
from gradekit.report.note_kinds import note_groups, note_kind

pytestmark = pytest.mark.unit

# Notes as intake and the grader word them, one of each kind.
WORDED = {
    "not submitted (scores 0): 020_leaves, 030_dynamic_graph": "left out notebooks (they score 0)",
    "not graded (not part of the assignment): torch.py": "handed in files that are not part of the assignment (set aside)",
    "010_history.ipynb cannot be read as a notebook (Expecting value); it scores 0": "handed in a notebook that cannot be read (it scores 0)",
    "010_history.ipynb is a symbolic link to '/x/y.ipynb': refused, not followed; it scores 0": "handed in a symbolic link (refused, not followed)",
    "010_history: cell 'answer_x' had its grade id changed; restored to 'answer_f'": "changed a graded cell's grade id (restored)",
    "010_history: unknown graded cell 'mine' is run as ordinary code": "added an unknown graded cell (run as ordinary code)",
    "010_history: a second copy of 'answer_f' is run as ordinary code": "copied a graded cell (the copy runs as ordinary code)",
    "010_history: deleted cell 'test_f' was put back from the release": "deleted a graded cell (put back from the release)",
    "010_history: answer cell 'answer_f' was deleted; its tests score 0": "deleted an answer cell (its tests score 0)",
    "010_history: cells were reordered; graded in the submitted order": "reordered cells (graded in the submitted order)",
    "010_history: the grader could not run test_f (bad reply)": "had a cell the grader could not run",
    "010_history: test_f ran past the 60 s limit and was interrupted": "had a cell that ran past the time limit (interrupted)",
    "010_history: nbgrader could not grade it (odd metadata); it scores 0": "had a notebook nbgrader could not grade (it scores 0)",
    "010_history: the kernel died (test_f); the cells after it score 0": "stopped their kernel (the cells after it score 0)",
}


def test_every_worded_note_has_its_kind():
    assert {note: note_kind(note)[0] for note in WORDED} == WORDED
    assert note_kind("not submitted (scores 0): 020_leaves, 030_dynamic_graph")[1] == 2


def test_a_note_no_rule_knows_groups_under_its_own_words():
    kind, listed = note_kind("010_history: something new happened to 'answer_f' (twice)")
    assert (kind, listed) == ("noted: something new happened to … …", None)


def test_groups_count_submissions_once_and_the_widest_comes_first():
    def row(student, *notes):
        return CohortRow(student, Status.GRADED, "", None, notes=notes)

    rows = (
        row("a", "not submitted (scores 0): n1, n2", "n1: cells were reordered; graded in the submitted order"),
        row("b", "not submitted (scores 0): n1"),
        row(
            "c",
            "not submitted (scores 0): n1, n2",
            "n3: cells were reordered; graded in the submitted order",
            "n4: cells were reordered; graded in the submitted order",
        ),
    )
    groups = note_groups(rows)
    assert [g.summary for g in groups] == [
        "3 submissions left out notebooks (they score 0): 1 to 2 each",
        "2 submissions reordered cells (graded in the submitted order)",
    ]
    assert groups[1].students == ("a", "c") and len(groups[1].notes) == 3
