"""A pre-check's reply: points and diagnosis per test cell, and never a line of hidden test code."""

import dataclasses
import json

import pytest
from precheck_fixtures import HIDDEN_LINE, NOTEBOOK, graded, source_notebook

from gradekit.core.notes import Finding, FindingKind
from gradekit.core.status import Status
from gradekit.grading.safe_execute import CUT_NOTICE
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
    assert cell["diagnosis"].startswith("W1 is not a leaf")


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


def test_a_notebook_held_for_a_ta_shows_no_points():
    finding = Finding(FindingKind.HIDDEN_CODE_SHOWN, NOTEBOOK)
    held = dataclasses.replace(graded(2), status=Status.FLAGGED, findings=(finding,))
    reply = reply_for(held)
    assert reply["status"] == "held for a TA" and reply["cells"] == [] and "score" not in reply


def test_a_grader_error_says_it_was_the_grader_and_not_counted():
    reply = reply_for(dataclasses.replace(graded(0), status=Status.GRADER_ERROR, record=None))
    assert reply["status"] == "grader error" and "not counted" in reply["message"]


def test_only_autograded_test_cells_are_listed_with_their_points():
    assert graded_test_cells(source_notebook()) == (("test_f", 2.0),)
