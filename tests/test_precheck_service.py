"""The pre-check over HTTP: refusals are JSON with a clear message and status; nobody reads another's results."""

import asyncio
import json
import threading

import pytest
from precheck_fixtures import HIDDEN_LINE, Clock, StandInGrader, desk, graded, request, run_apart
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from gradekit.precheck import service
from gradekit.precheck.service import make_app

pytestmark = pytest.mark.unit
PREFIX = "/services/precheck/"
TOKENS = {"token-of-ana": "ana", "token-of-ben": "ben"}


def identify(handler):
    return TOKENS.get(handler.request.headers.get("Authorization", "").removeprefix("token "))


async def call(port, path, token=None, body=None):
    headers = {"Authorization": f"token {token}"} if token else {}
    fetched = HTTPRequest(
        f"http://127.0.0.1:{port}{PREFIX}{path}",
        method="GET" if body is None else "POST",
        body=None if body is None else (body if isinstance(body, bytes) else json.dumps(body)),
        headers=headers,
    )
    try:
        response = await AsyncHTTPClient().fetch(fetched)
    except HTTPClientError as error:
        response = error.response
    return response.code, json.loads(response.body)


def serving(tmp_path, clock, scenario, outcome=None):
    async def main():
        front = desk(tmp_path, StandInGrader(outcome or graded(2)), clock)
        sockets = bind_sockets(0, "127.0.0.1")
        server = HTTPServer(make_app(front, PREFIX, identify))
        server.add_sockets(sockets)
        try:
            return await scenario(sockets[0].getsockname()[1])
        finally:
            server.stop()

    return run_apart(main())


def test_a_request_without_a_valid_token_is_refused_as_not_signed_in(tmp_path):
    clock = Clock()

    async def scenario(port):
        return await call(port, "api/checks", None, request(clock, "a" * 16)), await call(
            port, "api/checks", "forged-token", request(clock, "b" * 16)
        )

    (missing, body), (forged, forged_body) = serving(tmp_path, clock, scenario)
    assert missing == forged == 401
    assert body["error"] == "not signed in" and "hub token" in body["message"]


def test_a_check_is_taken_then_read_back_by_its_owner_only(tmp_path):
    clock = Clock()
    diagnosis = "float32 where float64 was asked [misconception: numpy-default-dtype]"

    async def scenario(port):
        taken = await call(port, "api/checks", "token-of-ana", request(clock, "a" * 16))
        check = taken[1]["id"]
        mine = await call(port, f"api/checks/{check}?wait=5", "token-of-ana")
        theirs = await call(port, f"api/checks/{check}", "token-of-ben")
        standing = await call(port, "api/standing", "token-of-ana")
        return taken, mine, theirs, standing

    taken, mine, theirs, standing = serving(tmp_path, clock, scenario, graded(0, diagnosis))
    assert taken[0] == 202 and taken[1]["state"] in ("queued", "running")
    assert mine[0] == 200 and mine[1]["state"] == "done"
    assert mine[1]["result"]["cells"][0]["misconceptions"] == ["numpy-default-dtype"]
    assert theirs[0] == 404 and theirs[1]["error"] == "not found" and "result" not in theirs[1]
    assert standing[1]["notebooks"]["010_history.ipynb"]["left_today"] == 2
    assert standing[1]["notebooks"]["010_history.ipynb"]["wait_seconds"] == 60
    assert HIDDEN_LINE not in json.dumps(mine[1])


def test_forged_replayed_and_malformed_requests_get_their_own_clear_errors(tmp_path):
    clock = Clock()

    async def scenario(port):
        body = request(clock, "a" * 16)
        first = await call(port, "api/checks", "token-of-ana", body)
        replayed = await call(port, "api/checks", "token-of-ana", body)
        forged = await call(port, "api/checks", "token-of-ben", request(clock, "b" * 16, student="ana"))
        not_json = await call(port, "api/checks", "token-of-ben", b"{not json")
        return first, replayed, forged, not_json

    first, replayed, forged, not_json = serving(tmp_path, clock, scenario)
    assert first[0] == 202
    assert (replayed[0], replayed[1]["error"]) == (409, "replayed")
    assert (forged[0], forged[1]["error"]) == (403, "forged")
    assert (not_json[0], not_json[1]["error"]) == (400, "bad request")


def test_a_cooldown_refusal_says_when_to_come_back(tmp_path):
    clock = Clock()

    async def scenario(port):
        first = await call(port, "api/checks", "token-of-ana", request(clock, "a" * 16))
        await call(port, f"api/checks/{first[1]['id']}?wait=5", "token-of-ana")
        return await call(port, "api/checks", "token-of-ana", request(clock, "b" * 16))

    status, body = serving(tmp_path, clock, scenario)
    assert status == 429 and body["error"] == "cooldown" and body["retry_after"] == 60


def test_while_the_service_is_still_warming_up_it_answers_that_it_is_starting(tmp_path):
    async def main():
        sockets = bind_sockets(0, "127.0.0.1")
        server = HTTPServer(make_app(None, PREFIX, identify))
        server.add_sockets(sockets)
        try:
            return await call(sockets[0].getsockname()[1], "api/standing", "token-of-ana")
        finally:
            server.stop()

    status, body = run_apart(main())
    assert status == 503 and body["error"] == "starting"


def test_an_upload_refused_whatever_it_holds_is_not_parsed_and_every_parse_runs_off_the_event_loop(
    tmp_path, monkeypatch
):
    clock = Clock()
    parsed_in = []
    parse = service.parsed_body

    def noted_parse(body):
        parsed_in.append(threading.get_ident())
        return parse(body)

    monkeypatch.setattr(service, "parsed_body", noted_parse)

    async def main():
        gate = asyncio.Event()
        front = desk(tmp_path, StandInGrader(graded(2), release=gate), clock)
        sockets = bind_sockets(0, "127.0.0.1")
        server = HTTPServer(make_app(front, PREFIX, identify))
        server.add_sockets(sockets)
        port = sockets[0].getsockname()[1]
        try:
            taken = await call(port, "api/checks", "token-of-ana", request(clock, "a" * 16))
            flood = [await call(port, "api/checks", "token-of-ana", b"{not even json") for _ in range(5)]
            gate.set()
            return taken, flood, threading.get_ident()
        finally:
            server.stop()

    taken, flood, loop_thread = run_apart(main())
    assert taken[0] == 202
    assert {(status, body["error"]) for status, body in flood} == {(429, "busy")}  # refused unread
    assert len(parsed_in) == 1 and parsed_in[0] != loop_thread
