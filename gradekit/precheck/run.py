"""Start the pre-check: the warm engine, the desk, the audit log and the HTTP service, as the hub runs it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import secrets
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlparse

from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from gradekit.core.course import Course
from gradekit.core.extensions import BadExtension, Extension, read_extensions
from gradekit.precheck.audit import AuditLog
from gradekit.precheck.desk import Desk
from gradekit.precheck.engine import SealedEngine
from gradekit.precheck.service import MAX_BODY_BYTES, Identify, make_app

log = logging.getLogger(__name__)

AUDIT_FILE = "audit.jsonl"
BODY_SECONDS, IDLE_SECONDS = 30, 75  # an upload that trickles in, and a connection left open, are dropped
DEFAULT_PREFIX = "/services/precheck/"


@dataclasses.dataclass
class Running:
    desk: Desk
    engine: SealedEngine
    port: int


def hub_address() -> tuple[str, int, str]:
    """(host, port, prefix) the hub gave this managed service: JUPYTERHUB_SERVICE_URL and _PREFIX."""
    url = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", DEFAULT_PREFIX)
    return url.hostname or "127.0.0.1", url.port or 10101, prefix


@contextlib.asynccontextmanager
async def running_service(
    course: Course, state_dir: Path, host: str, port: int, prefix: str, identify: Identify | None = None
) -> AsyncIterator[Running]:
    """The service listening on host:port, its grading processes warm; stopped and cleaned up on exit."""
    # Listening comes first: the hub waits for the service to answer before it serves anyone, and
    # building the grading template and warming the grading processes takes a while (503 meanwhile).
    app = make_app(None, prefix, identify, secrets.token_bytes(32))
    # The hub's proxy is not the only way in (students have accounts on the machine): no forwarded
    # address is believed, and a slow upload or an idle connection is dropped.
    server = HTTPServer(
        app,
        max_body_size=MAX_BODY_BYTES,
        xheaders=False,
        body_timeout=BODY_SECONDS,
        idle_connection_timeout=IDLE_SECONDS,
    )
    listening = bind_sockets(port, host)
    server.add_sockets(listening)
    try:
        engine = await asyncio.to_thread(SealedEngine, course, state_dir, course.precheck.workers)
        try:
            desk = Desk(
                course.precheck,
                course.assignment_id,
                engine.source_notebooks(),
                engine.grade,
                AuditLog(Path(state_dir) / AUDIT_FILE),
                state_dir=engine.state_dir,  # limits, nonces and results survive a restart
                extensions=lambda: course_extensions(course),
            )
            app.settings["precheck_desk"] = desk  # requests are taken from now on, graded once a process is warm
            try:
                await engine.warm()
                yield Running(desk, engine, listening[0].getsockname()[1])
            finally:
                desk.flush()
        finally:
            engine.close()
    finally:
        server.stop()


def course_extensions(course: Course) -> dict[str, Extension]:
    """The course's extensions as `gradekit extend` wrote them; a damaged file is logged and counts as none."""
    try:
        return read_extensions(course.extensions_file)
    except BadExtension as error:
        log.error("extensions not honoured: %s", error)
        return {}


def serve(course: Course, state_dir: Path) -> None:
    """Run as the hub's managed service until the hub stops it (SIGTERM) or a person does (SIGINT).

    Either signal cancels the service wherever it is, warming up included, so its grading
    processes are killed and its files removed before it exits, without a traceback.
    """
    host, port, prefix = hub_address()

    async def until_stopped() -> None:
        async with running_service(course, state_dir, host, port, prefix):
            log.warning("pre-check of %s ready on %s:%d%s", course.assignment_id, host, port, prefix)
            await asyncio.Event().wait()

    async def main() -> None:
        service = asyncio.ensure_future(until_stopped())
        for signum in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(signum, service.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await service
        log.warning("pre-check of %s stopped; its grading processes have ended", course.assignment_id)

    asyncio.run(main())
