"""The pre-check on the real sealed engine: a wrong answer's diagnosis comes back, the tests themselves never do."""

import json
import secrets
import time
import types

import nbformat
import pytest
from precheck_fixtures import run_apart
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from gradekit.authoring.solutions import load_controls
from gradekit.grading.safe_execute import CUT_NOTICE
from gradekit.precheck.engine import without_hub_credentials
from gradekit.precheck.reply import secret_lines
from gradekit.precheck.run import DEFAULT_PREFIX, running_service
from gradekit.proof.subjects import answer_sources, fill_answers, mixed_answer_sources

NOTEBOOK = "010_history"
TOKENS = {"token-of-ana": "ana", "token-of-ben": "ben"}


def identify(handler):
    return TOKENS.get(handler.request.headers.get("Authorization", "").removeprefix("token "))


@pytest.mark.unit
def test_no_grading_process_inherits_the_services_hub_credentials():
    kept = without_hub_credentials({"JUPYTERHUB_API_TOKEN": "t", "JPY_API_TOKEN": "t", "PATH": "/bin", "HOME": "/h"})
    assert kept == {"PATH": "/bin", "HOME": "/h"}


def _notebook(course, manifest, control=None) -> dict:
    filled = fill_answers(course.release_dir / f"{NOTEBOOK}.ipynb", answer_sources(manifest, NOTEBOOK, control))
    return json.loads(nbformat.writes(filled))


async def _call(port, path, token, body=None):
    request = HTTPRequest(
        f"http://127.0.0.1:{port}{DEFAULT_PREFIX}{path}",
        method="GET" if body is None else "POST",
        body=None if body is None else json.dumps(body),
        headers={"Authorization": f"token {token}"},
        request_timeout=120,
    )
    try:
        response = await AsyncHTTPClient().fetch(request)
    except HTTPClientError as error:
        response = error.response
    return response.code, json.loads(response.body)


async def _checked(port, token, content):
    body = {"notebook": f"{NOTEBOOK}.ipynb", "content": content, "nonce": secrets.token_hex(16), "sent": time.time()}
    status, taken = await _call(port, "api/checks", token, body)
    assert status == 202, taken
    while taken.get("state") != "done":
        status, taken = await _call(port, f"api/checks/{taken['id']}?wait=60", token)
        assert status == 200, taken
    return taken


@pytest.mark.nbgrader
def test_a_wrong_answer_gets_its_diagnosis_a_right_one_full_marks_and_no_reply_shows_a_hidden_line(
    course, manifest, tmp_path
):
    control = next(c for c in load_controls(manifest) if c.name == "010-float64_leaf__default_dtype")
    wrong, right = _notebook(course, manifest, control), _notebook(course, manifest)

    async def scenario():
        async with running_service(course, tmp_path / "state", "127.0.0.1", 0, DEFAULT_PREFIX, identify) as running:
            first = await _checked(running.port, "token-of-ana", wrong)
            theirs = await _call(running.port, f"api/checks/{first['id']}", "token-of-ben")
            fixed = await _checked(running.port, "token-of-ben", right)
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
            guessed = await _checked(running.port, "token-of-ana", _raising(course, manifest, hidden))
            missed = await _checked(running.port, "token-of-ben", _raising(course, manifest, other))
        return guessed, missed

    guessed, missed = run_apart(scenario())
    assert guessed["result"]["status"] == "graded"
    assert guessed["result"] == missed["result"]
    failed = [cell for cell in guessed["result"]["cells"] if not cell["passed"]]
    assert failed and all("ValueError; its message is what your own run" in cell["diagnosis"] for cell in failed)
    assert hidden not in json.dumps(guessed) and CUT_NOTICE not in json.dumps(guessed)
