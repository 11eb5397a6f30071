"""The share of negative controls stopped by visible checks, and right answers a visible check refuses."""

import pytest

from gradekit.authoring.solutions import NegativeControl
from gradekit.core.notebook_script import Role, ScriptCell
from gradekit.proof.subjects import BLANK_ID, REFERENCE_ID, Subject
from gradekit.proof.visible import (
    failed_visibly,
    share_table,
    visible_part,
    visible_refusals,
    visible_script,
    visible_shares,
)

pytestmark = pytest.mark.unit

NOTEBOOK = "010_x"


def _subject(name: str, misconception: str = "", fails: tuple[str, ...] = ()) -> Subject:
    control = NegativeControl(name, NOTEBOOK, "f", misconception, fails, "def f(): ...")
    return Subject(control.student_id, (NOTEBOOK,), control)


CAUGHT = _subject("caught", "m-one", ("test_a",))
CAUGHT_UNNAMED = _subject("unnamed", "m-two", ("test_a",))
HIDDEN_ONLY = _subject("hidden", "m-three", ("test_b",))
RIGHT = _subject("right")
SUBJECTS = (
    Subject(REFERENCE_ID, (NOTEBOOK,)),
    Subject(BLANK_ID, (NOTEBOOK,)),
    CAUGHT,
    CAUGHT_UNNAMED,
    HIDDEN_ONLY,
    RIGHT,
)


def test_the_visible_part_leaves_out_every_hidden_region_with_its_markers():
    cell = (
        "seen = 1\n### BEGIN HIDDEN TESTS\nsecret = 2\n### END HIDDEN TESTS\nafter = 3\n    ### BEGIN HIDDEN TESTS\nx"
    )
    assert visible_part(cell) == "seen = 1\nafter = 3"


def test_only_test_cells_are_cut_down():
    script = (
        ScriptCell(Role.CODE, "setup", "### BEGIN HIDDEN TESTS\nkept = 1"),
        ScriptCell(Role.TEST, "test_a", "shown = 1\n### BEGIN HIDDEN TESTS\nhidden = 2\n### END HIDDEN TESTS", 1),
    )
    setup, test = visible_script(script)
    assert setup == script[0]
    assert test.body == "shown = 1" and test.points == 1


def test_a_control_is_stopped_when_a_cell_it_declares_fails_visibly_and_named_when_its_misconception_shows():
    failed = {
        (CAUGHT.student_id, NOTEBOOK): {"test_a": "wrong [misconception: m-one]"},
        (CAUGHT_UNNAMED.student_id, NOTEBOOK): {"test_a": "wrong, no tag"},
        (HIDDEN_ONLY.student_id, NOTEBOOK): {},
    }
    (share,) = visible_shares([NOTEBOOK], SUBJECTS, failed)
    assert share.controls == (CAUGHT.student_id, CAUGHT_UNNAMED.student_id, HIDDEN_ONLY.student_id)
    assert share.stopped == (CAUGHT.student_id, CAUGHT_UNNAMED.student_id)
    assert share.named == (CAUGHT.student_id,)
    assert share.missed == (HIDDEN_ONLY.student_id,)
    assert share.percent == "67%"


def test_a_missed_control_carries_the_reason_it_declares_and_a_stopped_one_that_declares_one_is_stale():
    explained = NegativeControl(
        "explained", NOTEBOOK, "f", "m-four", ("test_b",), "def f(): ...", "the page shows no such input"
    )
    stale = NegativeControl("stale", NOTEBOOK, "f", "m-five", ("test_a",), "def f(): ...", "thought to be hidden only")
    subjects = (*SUBJECTS, *(Subject(c.student_id, (NOTEBOOK,), c) for c in (explained, stale)))
    failed = {(stale.student_id, NOTEBOOK): {"test_a": "wrong [misconception: m-five]"}}
    (share,) = visible_shares([NOTEBOOK], subjects, failed)
    assert dict(share.missed_reasons)[explained.student_id] == "the page shows no such input"
    assert dict(share.missed_reasons)[HIDDEN_ONLY.student_id] == ""
    assert stale.student_id not in dict(share.missed_reasons)
    assert share.stale_reasons == (stale.student_id,)


def test_the_figure_lists_each_missed_control_with_its_reason():
    from gradekit.commands.figures import visible_figure
    from gradekit.proof.check_course import CheckResult

    explained = NegativeControl(
        "explained", NOTEBOOK, "f", "m-four", ("test_b",), "def f(): ...", "no page input shows it"
    )
    subjects = (*SUBJECTS, Subject(explained.student_id, (NOTEBOOK,), explained))
    shares = visible_shares([NOTEBOOK], subjects, {(CAUGHT.student_id, NOTEBOOK): {"test_a": "x"}})
    figure = visible_figure(CheckResult(subjects, {}, (), 0.0, shares))
    assert f"- `{explained.student_id}`: no page input shows it" in figure
    assert f"- `{HIDDEN_ONLY.student_id}`: no reason recorded" in figure
    assert f"`{CAUGHT.student_id}`" not in figure.split("Not stopped")[1]


def test_the_table_ends_with_the_total_and_a_notebook_without_controls_shows_a_dash():
    shares = visible_shares([NOTEBOOK, "020_y"], SUBJECTS, {(CAUGHT.student_id, NOTEBOOK): {"test_a": "x"}})
    rows = share_table(shares)
    assert rows[0] == (NOTEBOOK, "3", "1", "0", "33%")
    assert rows[1] == ("020_y", "0", "0", "0", "-")
    assert rows[2] == ("**every notebook**", "3", "1", "0", "33%")


def test_a_right_answer_refused_by_a_visible_check_is_reported_and_a_control_or_the_blank_stubs_are_not():
    failed = {
        (RIGHT.student_id, NOTEBOOK): {"test_b": "too strict"},
        (REFERENCE_ID, NOTEBOOK): {},
        (BLANK_ID, NOTEBOOK): {"test_a": "not written yet"},
        (CAUGHT.student_id, NOTEBOOK): {"test_a": "wrong"},
    }
    (refusal,) = visible_refusals(SUBJECTS, failed)
    assert (refusal.student_id, refusal.cell, refusal.said) == (RIGHT.student_id, "test_b", "too strict")


def test_the_blank_stubs_are_not_run_on_their_visible_checks():
    ran = []
    failed_visibly(SUBJECTS, lambda subject, notebook: ran.append(subject.student_id) or {})
    assert BLANK_ID not in ran and REFERENCE_ID in ran and RIGHT.student_id in ran


def test_every_visible_check_says_what_it_checked_and_that_the_grader_tests_more():
    """The words the feedback page and the student rely on: a closing print that starts with "Checked "."""
    import ast

    from gradekit.core.manifest import SCRIPTS_DIR
    from gradekit.core.notebook_script import read_script
    from gradekit.grading.preprocessors import VISIBLE_PASSED

    for path in sorted(SCRIPTS_DIR.glob("*.py")):
        for cell in read_script(path):
            if cell.role is not Role.TEST:
                continue
            printed = [
                node.args[0].value
                for node in ast.walk(ast.parse(visible_part(cell.body)))
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print" and node.args
                if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            ]
            assert printed, f"{path.name}/{cell.grade_id}: the visible check prints nothing when it passes"
            assert printed[-1].startswith(VISIBLE_PASSED), f"{path.name}/{cell.grade_id}: {printed[-1]!r}"
            assert "The grader also" in printed[-1], f"{path.name}/{cell.grade_id}: {printed[-1]!r}"
