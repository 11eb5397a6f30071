"""The pre-check on the real sealed engine: a wrong answer's diagnosis comes back, the tests themselves never do."""

import asyncio
import dataclasses
import json
import os
import secrets
import time
import types

import nbformat
import pytest
from precheck_fixtures import NOTEBOOK, answered, call, checked, endless_reply_upload, identify, run_apart

from gradekit.authoring.solutions import load_controls
from gradekit.grading.hidden_lines import CUT_NOTICE
from gradekit.precheck.engine import without_hub_credentials
from gradekit.precheck.reply import secret_lines
from gradekit.precheck.run import DEFAULT_PREFIX, running_service
from gradekit.proof.subjects import fill_answers, mixed_answer_sources


@pytest.mark.unit
def test_no_grading_process_inherits_the_services_hub_credentials():
    kept = without_hub_credentials({"JUPYTERHUB_API_TOKEN": "t", "JPY_API_TOKEN": "t", "PATH": "/bin", "HOME": "/h"})
    assert kept == {"PATH": "/bin", "HOME": "/h"}


@pytest.mark.nbgrader
def test_a_wrong_answer_gets_its_diagnosis_a_right_one_full_marks_and_no_reply_shows_a_hidden_line(
    course, manifest, tmp_path
):
    control = next(c for c in load_controls(manifest) if c.name == "010-float64_leaf__default_dtype")
    wrong, right = answered(course, manifest, control), answered(course, manifest)

    async def scenario():
        async with running_service(course, tmp_path / "state", "127.0.0.1", 0, DEFAULT_PREFIX, identify) as running:
            first = await checked(running.port, "token-of-ana", wrong)
            theirs = await call(running.port, f"api/checks/{first['id']}", "token-of-ben")
            fixed = await checked(running.port, "token-of-ben", right)
            sources = running.desk.sources[NOTEBOOK]
        return first, theirs, fixed, sources

    first, theirs, fixed, source = run_apart(scenario())
    cells = {cell["cell"]: cell for cell in first["result"]["cells"]}
    assert not cells["test_float64_leaf"]["passed"]
    assert cells["test_float64_leaf"]["misconceptions"] == ["numpy-default-dtype"]
    assert cells["test_float64_leaf"]["diagnosis"]
    assert all(cells[name]["passed"] for name in cells if name not in control.fails)
    assert theirs[0] == 404 and "result" not in theirs[1]
    assert fixed["result"]["score"] == fixed["result"]["max_score"] > 0
    hidden = secret_lines(source)
    assert hidden  # the notebook has hidden tests to leak
    for reply in (first, fixed):
        sent = json.dumps(reply)
        assert [line for line in hidden if line in sent] == []
    audit = [json.loads(line) for line in (tmp_path / "state" / "audit.jsonl").read_text().splitlines()]
    assert [(line["student"], line["event"]) for line in audit] == [
        ("ana", "taken"),
        ("ana", "graded"),
        ("ben", "taken"),
        ("ben", "graded"),
    ]


def _raising(course, manifest, message: str) -> dict:
    """010 with an answer that raises an error carrying `message`, as a student probing the pre-check would write."""
    raising = types.SimpleNamespace(
        notebook=NOTEBOOK,
        function="float64_leaf",
        source=f"def float64_leaf(values):\n    raise ValueError({message!r})\n",
    )
    sources = mixed_answer_sources(manifest, NOTEBOOK, (raising,))
    filled = fill_answers(course.release_dir / f"{NOTEBOOK}.ipynb", sources)
    return json.loads(nbformat.writes(filled))


@pytest.mark.nbgrader
def test_an_error_carrying_a_hidden_line_gets_the_same_reply_as_one_carrying_any_other_line(course, manifest, tmp_path):
    source = nbformat.read(course.source_dir / f"{NOTEBOOK}.ipynb", as_version=4)
    hidden = min(
        secret_lines(source), key=lambda line: (len(line), line)
    )  # a real line of this notebook's hidden tests
    other = ("no line of the tests reads like this one " * 10)[: len(hidden)]
    assert other not in secret_lines(source)

    async def scenario():
        async with running_service(course, tmp_path / "state", "127.0.0.1", 0, DEFAULT_PREFIX, identify) as running:
            guessed = await checked(running.port, "token-of-ana", _raising(course, manifest, hidden))
            missed = await checked(running.port, "token-of-ben", _raising(course, manifest, other))
        return guessed, missed

    guessed, missed = run_apart(scenario())
    assert guessed["result"]["status"] == "graded"
    assert guessed["result"] == missed["result"]
    failed = [cell for cell in guessed["result"]["cells"] if not cell["passed"]]
    assert failed and all("ValueError; its message is what your own run" in cell["diagnosis"] for cell in failed)
    assert hidden not in json.dumps(guessed) and CUT_NOTICE not in json.dumps(guessed)


# One check that never ends beside an honest one, on one grading process -------------------------------------

# CPU seconds per check; its wall-clock backstop is three times as long. An honest check of this
# notebook used under 3 (the hang test passed with a budget of 3 on a quiet machine).
CHECK_SECONDS = 10.0
# The hang test runs alone, on a quiet machine: its spinning check is stopped at half that budget,
# which still leaves an honest check nearly twice what it uses.
QUIET_CHECK_SECONDS = 5.0
# Generous: the hostile check's whole wall-clock backstop, then the honest check graded on a fresh process.
HONEST_CHECK_WITHIN = 3 * CHECK_SECONDS + 120
CLOSED_WITHIN = 30  # closing kills a grading process stuck on a check instead of waiting for it
STUCK = ("mallory", "eve")


def grade_or_hang(template_root, folder, student):
    """Stands in for the grading task: the grading process itself spins for ever on a stuck student's check."""
    from gradekit.grading.executors import grade_task

    while student in STUCK:
        pass
    return grade_task(template_root, folder, student)


def _on_a_budget(course, seconds=CHECK_SECONDS):
    settings = dataclasses.replace(course.precheck, workers=1, check_seconds=seconds)
    return dataclasses.replace(course, precheck=settings)


async def _timed(port, token, content):
    started = time.monotonic()
    reply = await checked(port, token, content)
    return reply, time.monotonic() - started


async def _taken(port, token, content) -> dict:
    """Send a check and return it once it has left the queue (being graded, or already answered)."""
    body = {"notebook": f"{NOTEBOOK}.ipynb", "content": content, "nonce": secrets.token_hex(16), "sent": time.time()}
    status, taken = await call(port, "api/checks", token, body)
    assert status == 202, taken
    while taken.get("state") == "queued":
        await asyncio.sleep(0.2)
        status, taken = await call(port, f"api/checks/{taken['id']}", token)
    return taken


async def _grading(port, token, content) -> None:
    """Send a check and return once it is being graded."""
    taken = await _taken(port, token, content)
    assert taken["state"] == "running", taken


async def _answer(port, token, check: dict) -> dict:
    while check.get("state") != "done":
        status, check = await call(port, f"api/checks/{check['id']}?wait=60", token)
        assert status == 200, check
    return check


def _hostile_beside_honest(course, tmp_path, hostile, honest, stuck_at_close=None):
    """Mallory's check and Ben's sent at once to one grading process, then, if given, one left stuck at closing.

    Returns mallory's reply, Ben's reply, Ben's seconds and the seconds closing took.
    """

    async def scenario():
        async with running_service(course, tmp_path / "state", "127.0.0.1", 0, DEFAULT_PREFIX, identify) as running:
            # Mallory's check is taken first and holds the one grading process.
            mallory = await _taken(running.port, "token-of-mallory", hostile)
            ben = await _timed(running.port, "token-of-ben", honest)
            theirs = await _answer(running.port, "token-of-mallory", mallory)
            if stuck_at_close is not None:
                await _grading(running.port, "token-of-eve", stuck_at_close)
            closing = time.monotonic()
        return theirs, ben, time.monotonic() - closing

    theirs, (his, his_seconds), closing_seconds = run_apart(scenario())
    return theirs, his, his_seconds, closing_seconds


def _grading_processes_left(state_dir) -> list[int]:
    folders = list(state_dir.glob("gradekit-precheck-*/processes"))
    return [int(p.name) for folder in folders for p in folder.iterdir() if os.path.exists(f"/proc/{p.name}")]


@pytest.mark.alone  # its hang must reach the CPU limit before the backstop: it needs a free core
@pytest.mark.nbgrader
def test_a_grading_process_that_hangs_is_replaced_and_the_next_students_check_is_graded(
    course, manifest, tmp_path, monkeypatch
):
    """The grading process itself hangs (an injected fault): the limit holds whatever makes it hang."""
    import gradekit.precheck.engine as engine

    monkeypatch.setattr(engine, "grade_task", grade_or_hang)
    right = answered(course, manifest)
    theirs, his, his_seconds, closing_seconds = _hostile_beside_honest(
        _on_a_budget(course, QUIET_CHECK_SECONDS), tmp_path, right, right, stuck_at_close=right
    )
    assert theirs["result"]["status"] == "not graded"
    assert "time limit" in theirs["result"]["message"]
    assert his["result"]["score"] == his["result"]["max_score"] > 0
    assert his_seconds < HONEST_CHECK_WITHIN
    assert closing_seconds < CLOSED_WITHIN
    assert _grading_processes_left(tmp_path / "state") == []
    assert not any((tmp_path / "state" / folder).exists() for folder in ("template", "notebook-templates"))


@pytest.mark.nbgrader
def test_an_upload_whose_reply_never_finishes_decoding_holds_up_no_classmate(course, manifest, tmp_path):
    hostile = endless_reply_upload(course, manifest)
    theirs, his, his_seconds, _ = _hostile_beside_honest(
        _on_a_budget(course), tmp_path, hostile, answered(course, manifest)
    )
    # Today the budget stops it; a decoder with a node budget of its own refuses the reply sooner.
    assert theirs["result"]["status"] in {"not graded", "held for a TA"}
    assert his["result"]["score"] == his["result"]["max_score"] > 0
    assert his_seconds < HONEST_CHECK_WITHIN
