"""The pre-check as a JupyterHub-managed service: HTTP over the desk, authenticated by the hub.

    POST {prefix}api/checks          {"notebook", "content", "nonce", "sent"[, "student"]} -> 202 and the check
    GET  {prefix}api/checks/<id>     the check, with its result once graded; ?wait=S waits up to S seconds
    GET  {prefix}api/standing        checks left today and cooldown per notebook, and whether it is open

A request is the student's when the hub says so: their hub token in an
`Authorization: token ...` header (JupyterLab's, or the one a server's
kernels inherit) or the service's OAuth cookie; the token needs the scope
`access:services!service=<name>` (deploy/jupyterhub_config.py grants it to
students' servers). Every refusal is a JSON body with `error` and `message`.

An upload that would be refused whatever it holds (the pre-check is closed,
or the student has a check in flight) is refused before its body is parsed;
the body is parsed in a thread, never on the event loop, and the desk judges
every other refusal before it looks at the notebook.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from tornado import web

from gradekit.precheck.desk import Check, Desk
from gradekit.precheck.refusals import Reason, Refusal

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 4 * 2**20
LONGEST_WAIT_SECONDS = 60.0
# A request's handler -> the hub user's name, or None; the hub's OAuth by default, a table in the load script.
Identify = Callable[[web.RequestHandler], str | None]


class _Handler(HubOAuthenticated, web.RequestHandler):
    @property
    def desk(self) -> Desk:
        return self.settings["precheck_desk"]

    def prepare(self):
        if self.settings.get("precheck_desk") is None:  # still building its template and warming up
            self.refuse(Refusal(Reason.STARTING, "the pre-check is starting: try again in a minute", 30.0))

    def get_current_user(self):
        identify = self.settings.get("precheck_identify")
        if identify is not None:
            return identify(self)
        model = super().get_current_user()
        return model["name"] if model and model.get("kind") == "user" else None

    def student(self) -> str | None:
        """The signed-in student, or None after answering the request with a refusal."""
        name = self.current_user
        if not name:
            self.refuse(
                Refusal(
                    Reason.NOT_SIGNED_IN,
                    "not signed in: the request carries no valid hub token for the pre-check (sign in to the hub again)",
                )
            )
            return None
        return name

    def refuse(self, refusal: Refusal) -> None:
        self.set_status(refusal.reason.status)
        if refusal.retry_after is not None:
            self.set_header("Retry-After", str(max(1, round(refusal.retry_after))))
        self.answer(refusal.as_json())

    def answer(self, body: dict) -> None:
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body))

    def write_error(self, status_code: int, **kwargs) -> None:
        # Never a traceback: a short JSON body in the same shape as the refusals.
        self.answer({"error": "http", "message": self._reason or f"HTTP {status_code}"})


def parsed_body(body: bytes) -> object:
    """The request's body as JSON; run in a thread, so that a flood of uploads leaves the event loop free."""
    return json.loads(body or b"null")


class ChecksHandler(_Handler):
    async def post(self) -> None:
        student = self.student()
        if student is None:
            return
        early = self.desk.refusal_before_reading(student)
        if early is not None:
            self.refuse(early)
            return
        try:
            request = await asyncio.to_thread(parsed_body, self.request.body)
        except ValueError:
            self.refuse(Refusal(Reason.BAD_REQUEST, "the request's body is not JSON"))
            return
        taken = self.desk.submit(student, request)
        if isinstance(taken, Refusal):
            self.refuse(taken)
            return
        self.set_status(202)
        self.set_header("Location", self.reverse_url("check", taken.id))
        self.answer(taken.as_json(self.desk.position(taken)))


class CheckHandler(_Handler):
    async def get(self, check_id: str) -> None:
        student = self.student()
        if student is None:
            return
        found = self.desk.result(student, check_id)
        if isinstance(found, Refusal):
            self.refuse(found)
            return
        wait = _seconds(self.get_argument("wait", "0"))
        if wait > 0:
            await self.desk.wait(found, wait)
        self.answer(_shown(self.desk, found))


class StandingHandler(_Handler):
    def get(self) -> None:
        student = self.student()
        if student is not None:
            self.answer(self.desk.standing(student))


def _shown(desk: Desk, check: Check) -> dict:
    return check.as_json(desk.position(check) if check.state == "queued" else None)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        return 0.0
    return min(max(value, 0.0), LONGEST_WAIT_SECONDS) if value == value else 0.0


def make_app(
    desk: Desk | None, prefix: str, identify: Identify | None = None, cookie_secret: bytes = b""
) -> web.Application:
    """The service's tornado application under `prefix` (JupyterHub's JUPYTERHUB_SERVICE_PREFIX)."""
    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    routes = [
        web.url(prefix + r"api/checks", ChecksHandler),
        web.url(prefix + r"api/checks/([A-Za-z0-9_-]+)", CheckHandler, name="check"),
        web.url(prefix + r"api/standing", StandingHandler),
    ]
    if identify is None:
        routes.append(web.url(prefix + "oauth_callback", HubOAuthCallbackHandler))
    return web.Application(
        routes,
        precheck_desk=desk,
        precheck_identify=identify,
        cookie_secret=cookie_secret or None,
        xsrf_cookies=False,  # token requests carry no cookie; HubOAuth checks xsrf itself for cookie requests
    )
