"""A pre-check's reply: points and diagnosis per test cell, and never a line of hidden test code."""

import dataclasses
import json

import nbformat
import pytest
from precheck_fixtures import HIDDEN_LINE, NOTEBOOK, graded, source_notebook

from gradekit.core.notes import Finding, FindingKind
from gradekit.core.status import ReplyStatus, Status
from gradekit.grading.hidden_lines import CUT_NOTICE
from gradekit.precheck.reply import graded_test_cells, leaked_lines, secret_lines, student_reply

pytestmark = pytest.mark.unit
SECRETS = secret_lines(source_notebook())


def reply_for(outcome) -> dict:
    return student_reply(NOTEBOOK, outcome, source_notebook(), SECRETS)


def test_a_failed_cell_shows_its_points_its_misconception_and_its_diagnosis_line():
    said = "Diagnosis: W1 is not a leaf: scale first, then requires_grad_() [misconception: requires-grad-then-scale]"
    reply = reply_for(graded(0, said.removeprefix("Diagnosis: ")))
    assert reply["status"] == "graded" and (reply["score"], reply["max_score"]) == (0, 2)
    (cell,) = reply["cells"]
    assert cell["cell"] == "test_f" and not cell["passed"]
    assert cell["misconceptions"] == ["requires-grad-then-scale"]
    # Named first, as the student's own notebook shows a diagnosis.
    assert (
        cell["diagnosis"]
        == "[misconception: requires-grad-then-scale] W1 is not a leaf: scale first, then requires_grad_()"
    )


def test_a_passed_cell_says_so_and_says_nothing_else():
    (cell,) = reply_for(graded(2))["cells"]
    assert cell == {
        "cell": "test_f",
        "points": 2,
        "max_points": 2,
        "passed": True,
        "misconceptions": [],
        "diagnosis": "",
    }


def test_no_hidden_test_line_reaches_the_reply_from_a_traceback_or_an_error_that_repeats_one():
    traceback = ["Traceback (most recent call last)", f"----> 5 {HIDDEN_LINE}", "AssertionError"]
    leaky = graded(0, f"it failed at {HIDDEN_LINE} [misconception: x-y]", traceback)
    reply = reply_for(leaky)
    sent = json.dumps(reply)
    assert HIDDEN_LINE not in sent and "secret hidden comparison" not in sent
    assert CUT_NOTICE in reply["cells"][0]["diagnosis"]
    assert reply["cells"][0]["misconceptions"] == ["x-y"]
    assert leaked_lines(reply, SECRETS) == []


def test_the_last_look_before_sending_finds_a_hidden_line_wherever_it_sits():
    assert leaked_lines({"cells": [{"anything": f"  {HIDDEN_LINE}  "}]}, SECRETS) == [HIDDEN_LINE]


def test_a_notebook_held_for_a_ta_shows_no_points_and_names_the_finding_in_the_graders_words_only():
    written = "WrittenByTheStudent" * 3
    finding = Finding(FindingKind.FORGING_METHOD, NOTEBOOK, "test_f", (written,))
    held = dataclasses.replace(graded(2), status=Status.FLAGGED, findings=(finding,))
    reply = reply_for(held)
    assert reply["status"] == "held for a TA" and reply["cells"] == [] and "score" not in reply
    assert FindingKind.FORGING_METHOD.phrase in reply["message"] and written not in reply["message"]


def test_a_cut_the_grader_made_in_an_output_is_not_told_so_a_printed_guess_learns_nothing():
    cut = Finding(FindingKind.HIDDEN_CODE_SHOWN, NOTEBOOK, "", ("test_f",))
    flagged = dataclasses.replace(graded(2), status=Status.FLAGGED, findings=(cut,))
    assert reply_for(flagged) == reply_for(graded(2))


def test_a_notebook_that_could_not_be_graded_is_told_in_fixed_words():
    written = "nbgrader met: print('a guessed line of the hidden tests')"
    failed = dataclasses.replace(graded(0), status=Status.FAILED, record=None, message=written)
    reply = reply_for(failed)
    assert reply["status"] == "not graded" and "guessed" not in reply["message"]


@pytest.mark.parametrize("guess_is_hidden", [True, False])
def test_the_message_of_an_error_the_students_code_raised_is_never_said_back(guess_is_hidden):
    guess = HIDDEN_LINE if guess_is_hidden else "q" * len(HIDDEN_LINE)
    raised = f"f raised ValueError: {guess} [misconception: made-up-by-student]"  # as call_answer words it
    # As the grader leaves it: a line of the message holding a hidden line is cut whole, and the cut flagged;
    # the traceback's last line keeps the message as it was raised.
    said = CUT_NOTICE if guess_is_hidden else raised
    findings = (Finding(FindingKind.HIDDEN_CODE_SHOWN, NOTEBOOK, "", ("test_f",)),) if guess_is_hidden else ()
    outcome = dataclasses.replace(
        graded(0, said, [f"Diagnosis: {raised}"]),
        status=Status.FLAGGED if guess_is_hidden else Status.GRADED,
        findings=findings,
    )
    (cell,) = reply_for(outcome)["cells"]
    assert cell["diagnosis"] == "f raised ValueError; its message is what your own run of the cell shows"
    assert cell["misconceptions"] == []


def test_an_error_of_the_students_own_class_is_not_named_and_a_known_errors_words_stay():
    own = reply_for(graded(0, "f raised GuessedLineOfTheTestsGoesHere: x"))["cells"][0]
    assert (
        own["diagnosis"] == "f raised an exception of its own class; its message is what your own run of the cell shows"
    )
    known = (
        "[misconception: vector-backward-without-cotangent] backward() was called with no argument "
        "(f raised RuntimeError: grad can be implicitly created only for scalar outputs)"
    )
    cell = reply_for(graded(0, known))["cells"][0]
    assert cell["misconceptions"] == ["vector-backward-without-cotangent"]
    assert cell["diagnosis"] == (
        "[misconception: vector-backward-without-cotangent] backward() was called with no argument "
        "(f raised RuntimeError; its message is what your own run of the cell shows)"
    )


def test_a_value_the_students_code_returned_is_said_back_only_too_short_to_hold_a_hidden_line():
    long_label = f"for w you answered {HIDDEN_LINE!r}, but the page works it out as 'unused'"
    cell = reply_for(graded(0, long_label))["cells"][0]
    assert cell["diagnosis"] == "for w you answered '...', but the page works it out as 'unused'"
    named = reply_for(graded(0, "f returned <SomeGuessedLine in the student's kernel>, not a tensor"))["cells"][0]
    assert named["diagnosis"] == "f returned <an object of its own class in the student's kernel>, not a tensor"
    subclass = reply_for(graded(0, "x should be a plain torch.Tensor, not the subclass GuessedName"))["cells"][0]
    assert subclass["diagnosis"] == "x should be a plain torch.Tensor, not a subclass of its own"


def test_a_long_returned_value_is_shortened_before_the_line_is_cut_to_its_length():
    label = ("x" * 580) + HIDDEN_LINE + ("y" * 400)
    (cell,) = reply_for(graded(0, f"for w you answered {label!r}, not one of the reasons"))["cells"]
    assert cell["diagnosis"] == "for w you answered '...', not one of the reasons"


def test_a_misconception_tag_inside_a_returned_value_is_not_named():
    said = "[misconception: grad-by-formula] you answered '[misconception: x-y]' for w"
    assert reply_for(graded(0, said))["cells"][0]["misconceptions"] == ["grad-by-formula"]


def test_a_checks_own_words_that_only_mention_raising_are_kept_whole():
    said = "the answer raised no error where the page shows a RuntimeError: it must raise one"
    assert reply_for(graded(0, said))["cells"][0]["diagnosis"] == said


def test_an_error_the_test_met_outside_the_checks_is_named_by_its_type_only():
    notebook = graded(0)
    output = nbformat.v4.new_output("error", ename="KeyError", evalue=repr(HIDDEN_LINE), traceback=[])
    source = source_notebook()
    source.cells[0].outputs = [output]
    outcome = dataclasses.replace(notebook, files=((f"{NOTEBOOK}.ipynb", nbformat.writes(source).encode()),))
    (cell,) = reply_for(outcome)["cells"]
    assert (
        cell["diagnosis"]
        == "the test stopped on an error: KeyError; its message is what your own run of the cell shows"
    )


def test_a_grader_error_says_it_was_the_grader_and_not_counted():
    reply = reply_for(dataclasses.replace(graded(0), status=Status.GRADER_ERROR, record=None))
    assert reply["status"] == "grader error" and "not counted" in reply["message"]


def test_only_autograded_test_cells_are_listed_with_their_points():
    assert graded_test_cells(source_notebook()) == (("test_f", 2.0),)


@pytest.mark.parametrize("name", ["AssertionError", "CrossingError"])
def test_a_bare_assert_or_a_broken_reply_of_the_kernel_is_named_without_its_message(name):
    output = nbformat.v4.new_output("error", ename=name, evalue=HIDDEN_LINE, traceback=[f"{name}: {HIDDEN_LINE}"])
    source = source_notebook()
    source.cells[0].outputs = [output]
    outcome = dataclasses.replace(graded(0), files=((f"{NOTEBOOK}.ipynb", nbformat.writes(source).encode()),))
    (cell,) = reply_for(outcome)["cells"]
    assert cell["diagnosis"].startswith("the test stopped on ") and HIDDEN_LINE not in cell["diagnosis"]
    assert CUT_NOTICE not in cell["diagnosis"]


@pytest.mark.parametrize("status", list(Status), ids=str)
def test_each_status_of_the_outcome_is_said_in_its_reply_word(status):
    outcome = graded(2, status=status)
    if status is Status.FLAGGED:
        outcome = dataclasses.replace(outcome, findings=(Finding(FindingKind.FORGED_FACT, NOTEBOOK, "a hook"),))
    if not status.has_grades:
        outcome = dataclasses.replace(outcome, record=None, files=())
    reply = reply_for(outcome)
    assert reply["status"] is ReplyStatus.of(status)
    assert json.loads(json.dumps(reply))["status"] == str(ReplyStatus.of(status))
