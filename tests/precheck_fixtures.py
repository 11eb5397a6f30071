"""A pre-check desk without the engine (a clock the test moves, a stand-in grader, a tiny source notebook),
and a student's calls to the real service over loopback."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
import secrets
import time
import types

import nbformat
from nbformat.v4 import new_code_cell, new_notebook
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from gradekit.core.settings import PrecheckSettings
from gradekit.core.status import Status
from gradekit.grading.gradebook_records import GradeRecord, NotebookRecord, SubmissionRecord
from gradekit.grading.submission_grader import GradedSubmission
from gradekit.precheck.audit import AuditLog
from gradekit.precheck.desk import Desk
from gradekit.precheck.run import DEFAULT_PREFIX
from gradekit.proof.subjects import answer_sources, fill_answers, mixed_answer_sources

NOTEBOOK = "010_history"
# The service's sign-in replaced by a table: a request's token names its student.
TOKENS = {"token-of-ana": "ana", "token-of-ben": "ben", "token-of-mallory": "mallory", "token-of-eve": "eve"}
HIDDEN_LINE = "expect(torch.equal(answer, torch.tensor([1.0, 2.0])), 'secret hidden comparison')"
TEST_SOURCE = (
    "assert callable(f)\nprint('Visible check passed: it runs')\n"
    f"### BEGIN HIDDEN TESTS\n{HIDDEN_LINE}\n### END HIDDEN TESTS"
)


class Clock:
    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def source_notebook():
    test = new_code_cell(TEST_SOURCE)
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_f", "points": 2, "locked": True}
    return new_notebook(cells=[test])


def graded_notebook(error_value: str | None, traceback: list[str] | None = None) -> bytes:
    """The autograded copy of the source notebook: its test cell failed with `error_value`, or passed."""
    notebook = source_notebook()
    if error_value is not None:
        notebook.cells[0].outputs = [
            nbformat.v4.new_output("error", ename="Diagnosis", evalue=error_value, traceback=traceback or [])
        ]
    return nbformat.writes(notebook).encode()


def graded(points: float, error_value: str | None = None, traceback: list[str] | None = None, status=Status.GRADED):
    record = SubmissionRecord(
        "s",
        None,
        (NotebookRecord(NOTEBOOK, False, None, (GradeRecord("test_f", points, None, None, False),), ()),),
    )
    files = ((f"{NOTEBOOK}.ipynb", graded_notebook(error_value, traceback)),)
    return GradedSubmission(student_id="s", status=status, message="", record=record, files=files, seconds=0.1)


@dataclasses.dataclass
class StandInGrader:
    """Grades every notebook as `outcome` says; records who was graded, in order; waits for `release` if set."""

    outcome: GradedSubmission
    order: list = dataclasses.field(default_factory=list)
    release: asyncio.Event | None = None

    async def __call__(self, student: str, notebook: str, content: bytes) -> GradedSubmission:
        self.order.append((student, notebook))
        if self.release is not None:
            await self.release.wait()
        return self.outcome


def desk(tmp_path, grader, clock, state_dir=None, extensions=None, **settings) -> Desk:
    """A desk on a stand-in grader; with `state_dir`, what it must not forget is kept there across "restarts".

    `extensions` (student -> Extension) stands for the course's extensions file.
    """
    values = dict(cooldown_seconds=60.0, daily_quota=3, workers=1, request_window_seconds=300.0) | settings
    return Desk(
        PrecheckSettings(**values),
        "autograd",
        {NOTEBOOK: source_notebook()},
        grader,
        AuditLog(tmp_path / "audit.jsonl"),
        clock,
        state_dir=state_dir,
        extensions=lambda: dict(extensions or {}),
    )


def request(clock, nonce: str, notebook: str = f"{NOTEBOOK}.ipynb", **extra) -> dict:
    content = json.loads(nbformat.writes(source_notebook()))
    return {"notebook": notebook, "content": content, "nonce": nonce, "sent": clock()} | extra


def run_apart(coroutine):
    """Run `coroutine` in an event loop of its own thread.

    Another test may leave this thread's loop marked as running (a browser
    session stays open for the whole run), where `asyncio.run` refuses to start.
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


# The real service, as a student's page calls it ------------------------------------------------------------


def identify(handler):
    return TOKENS.get(handler.request.headers.get("Authorization", "").removeprefix("token "))


def answered(course, manifest, control=None) -> dict:
    """The release notebook of `NOTEBOOK` with the reference's answers (or a negative control's), as JSON."""
    filled = fill_answers(course.release_dir / f"{NOTEBOOK}.ipynb", answer_sources(manifest, NOTEBOOK, control))
    return json.loads(nbformat.writes(filled))


# An answer that makes the kernel's reply a tuple of tuples sharing their children, 64 levels deep:
# a decoder that walks every node it reaches would never finish.
ENDLESS_REPLY = """
import builtins, io, torch
_node = ('tuple', [])
for _ in range(64):
    _node = ('tuple', [_node, _node])
_buffer = io.BytesIO()
torch.save({'tree': {'updates': [], 'body': _node}, 'storages': []}, _buffer)
builtins.__kit_answer__.__globals__['respond'] = lambda *_: _buffer.getvalue()
"""


def endless_reply_upload(course, manifest) -> dict:
    """The reference's notebook whose first sealed function answers with `ENDLESS_REPLY`, as JSON."""
    endless = types.SimpleNamespace(notebook=NOTEBOOK, function="float64_leaf", source=ENDLESS_REPLY)
    sources = mixed_answer_sources(manifest, NOTEBOOK, (endless,))
    return json.loads(nbformat.writes(fill_answers(course.release_dir / f"{NOTEBOOK}.ipynb", sources)))


async def call(port, path, token, body=None):
    """(HTTP status, JSON body) of a GET, or of a POST of `body`, to the service on `port`."""
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


async def checked(port, token, content):
    """Send a pre-check of `content` and wait for its result."""
    body = {"notebook": f"{NOTEBOOK}.ipynb", "content": content, "nonce": secrets.token_hex(16), "sent": time.time()}
    status, taken = await call(port, "api/checks", token, body)
    assert status == 202, taken
    while taken.get("state") != "done":
        status, taken = await call(port, f"api/checks/{taken['id']}?wait=60", token)
        assert status == 200, taken
    return taken
