"""Simulated students against the real pre-check service on loopback: how long a result takes when many check at once.

The service is the one the hub runs (warm grading processes, the desk, the
HTTP layer), started here on a free loopback port; only the hub's sign-in is
replaced by a table of tokens, one per simulated student. Every student sends
their saved notebook (the reference answers filled into the release notebook),
waits for the result, then asks again at once, which the cooldown must refuse.
Each cohort is bounded in time: a student still waiting at the limit is
counted as unanswered. The figures are printed, never asserted on.

The service grades on its own processes, or on a Dask cluster: one already
running (`scheduler`), or one of `local_cluster` worker processes started on
this machine for the run; the figures say which engine ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import os
import secrets
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from gradekit.core.course import Course
from gradekit.core.manifest import Manifest
from gradekit.core.process_readings import machine_busy_seconds, machine_stolen_seconds
from gradekit.precheck.engine import without_hub_credentials
from gradekit.precheck.run import DEFAULT_PREFIX, running_service
from gradekit.proof.subjects import answer_sources, fill_answers

LOOPBACK = "127.0.0.1"
POLL_SECONDS = 30  # how long one GET waits for the result before asking again


@dataclasses.dataclass(frozen=True)
class LoadPlan:
    cohorts: tuple[int, ...] = (10, 50, 100)
    notebook: str = "010_history"
    time_limit: float = 900.0  # seconds one cohort may take
    workers: int | None = None  # checks graded at once; None: the local cluster's size, else c.Precheck.workers
    scheduler: str = ""  # a running Dask cluster's scheduler; "": the course's c.Precheck.scheduler
    local_cluster: int = 0  # worker processes of a Dask cluster started on this machine for the run; 0: none


@dataclasses.dataclass(frozen=True)
class CohortLoad:
    students: int
    seconds_to_result: tuple[float, ...]  # one per student who got a result
    rejected_for_cooldown: int  # second requests refused by the cooldown (every student sends one)
    unanswered: int  # students still waiting when the cohort's time ran out
    wall_seconds: float
    busy_seconds: float = 0.0  # the machine's cores' busy time meanwhile (anyone's work); 0 where Linux does not say
    stolen_seconds: float = 0.0  # the cores' time the host of a virtual machine gave to others meanwhile

    @property
    def cores_busy(self) -> float:
        """The share of the cores' time that was busy during the cohort; NaN where it was not read."""
        return self._share(self.busy_seconds)

    @property
    def cores_stolen(self) -> float:
        """The share of the cores' time the host took for others (0 on bare metal); NaN where busy was not read."""
        return self._share(self.stolen_seconds)

    @property
    def cores_busy_words(self) -> str:
        return _percent(self.cores_busy)

    @property
    def cores_stolen_words(self) -> str:
        return _percent(self.cores_stolen)

    def _share(self, seconds: float) -> float:
        cores = os.cpu_count() or 1  # /proc/stat counts every core of the machine
        if not self.busy_seconds or not self.wall_seconds:
            return float("nan")
        return seconds / (self.wall_seconds * cores)

    @property
    def p50(self) -> float:
        return percentile(self.seconds_to_result, 50)

    @property
    def p95(self) -> float:
        return percentile(self.seconds_to_result, 95)


@dataclasses.dataclass(frozen=True)
class LoadResult:
    notebook: str
    workers: int
    cores: int
    lone_first_result: float  # seconds: one student alone, the service warm
    cohorts: tuple[CohortLoad, ...]
    engine: str = ""  # which engine graded: the service's own processes, or a Dask cluster
    load_average: float = 0.0  # the machine's one-minute load when the run began (other work shares the cores)

    @property
    def ok(self) -> bool:
        return all(c.unanswered == 0 and c.rejected_for_cooldown == c.students for c in self.cohorts)


def _percent(share: float) -> str:
    return "not read" if math.isnan(share) else f"{share:.0%}"


def percentile(values: tuple[float, ...], percent: int) -> float:
    """The `percent`th percentile of `values` (counted inclusively); NaN when there are none."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]


@contextlib.contextmanager
def local_cluster(workers: int) -> Iterator[str]:
    """A Dask cluster of `workers` single-threaded worker processes on this machine, for the run; yields its address.

    Its workers, and those started in place of a lost one, take this process's environment: the hub's
    credentials leave it first (the load command signs its students in with a table of its own).
    """
    from distributed import LocalCluster

    kept = without_hub_credentials(dict(os.environ))
    os.environ.clear()
    os.environ.update(kept)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def run_load(course: Course, manifest: Manifest, plan: LoadPlan) -> LoadResult:
    """Start the service (on a local Dask cluster of its own if the plan asks), then time each cohort."""
    if not plan.local_cluster:
        return _run_load(course, manifest, plan)
    with local_cluster(plan.local_cluster) as scheduler:
        workers = plan.workers or plan.local_cluster
        return _run_load(course, manifest, dataclasses.replace(plan, scheduler=scheduler, workers=workers))


def _run_load(course: Course, manifest: Manifest, plan: LoadPlan) -> LoadResult:
    """Start the service, time one lone student, then each cohort in turn."""
    # Long enough that the immediate second request always meets it, short of a real course's.
    settings = dataclasses.replace(
        course.precheck,
        cooldown_seconds=3600.0,
        daily_quota=10,
        enabled=True,
        workers=plan.workers or course.precheck.workers,
        scheduler=plan.scheduler or course.precheck.scheduler,
    )
    course = dataclasses.replace(course, precheck=settings)
    release = course.release_dir / f"{plan.notebook}.ipynb"
    filled = fill_answers(release, answer_sources(manifest, plan.notebook, None))
    content = json.loads(nbformat.writes(filled))
    tokens: dict[str, str] = {}
    logging.getLogger("tornado.access").setLevel(logging.ERROR)  # one line per request would drown the figures

    def identify(handler) -> str | None:
        given = handler.request.headers.get("Authorization", "").removeprefix("token ").strip()
        return tokens.get(given)

    load_average = os.getloadavg()[0]

    async def main() -> LoadResult:
        with tempfile.TemporaryDirectory(prefix="gradekit-precheck-load-") as state:
            async with running_service(course, Path(state), LOOPBACK, 0, DEFAULT_PREFIX, identify) as running:
                base = f"http://{LOOPBACK}:{running.port}{DEFAULT_PREFIX}api/"
                client = AsyncHTTPClient(force_instance=True, max_clients=max(plan.cohorts) * 2 + 2)
                try:
                    lone = await _cohort(client, base, tokens, "lone", 1, plan, content)
                    cohorts = [
                        await _cohort(client, base, tokens, f"sim{size}", size, plan, content) for size in plan.cohorts
                    ]
                finally:
                    client.close()
                engine = running.engine.runner.words
        first = lone.seconds_to_result[0] if lone.seconds_to_result else float("nan")
        cores = len(os.sched_getaffinity(0))
        return LoadResult(plan.notebook, settings.workers, cores, first, tuple(cohorts), engine, load_average)

    return asyncio.run(main())


async def _cohort(client, base: str, tokens: dict, tag: str, size: int, plan: LoadPlan, content: dict) -> CohortLoad:
    names = [f"{tag}-{number:03d}" for number in range(size)]
    for name in names:
        tokens[secrets.token_hex(16)] = name
    token_of = {name: token for token, name in tokens.items()}
    started, busy_before, stolen_before = time.monotonic(), machine_busy_seconds(), machine_stolen_seconds()
    tasks = [asyncio.ensure_future(_student(client, base, token_of[name], plan.notebook, content)) for name in names]
    done, pending = await asyncio.wait(tasks, timeout=plan.time_limit)
    for task in pending:
        task.cancel()
    outcomes = [task.result() for task in done if not task.cancelled() and task.exception() is None]
    times = tuple(sorted(seconds for seconds, _ in outcomes if seconds is not None))
    return CohortLoad(
        size,
        times,
        sum(1 for _, refused in outcomes if refused),
        size - len(times),
        time.monotonic() - started,
        machine_busy_seconds() - busy_before,
        machine_stolen_seconds() - stolen_before,
    )


async def _student(client, base: str, token: str, notebook: str, content: dict) -> tuple[float | None, bool]:
    """(seconds from sending to the result, whether the immediate second request met the cooldown)."""
    started = time.monotonic()
    status, body = await _send(client, base + "checks", token, _request(notebook, content))
    if status != 202:
        return None, False
    check = body["id"]
    while body.get("state") != "done":
        status, body = await _send(client, f"{base}checks/{check}?wait={POLL_SECONDS}", token)
        if status != 200:
            return None, False
    seconds = time.monotonic() - started
    status, again = await _send(client, base + "checks", token, _request(notebook, content))
    return seconds, status == 429 and again.get("error") == "cooldown"


def _request(notebook: str, content: dict) -> dict:
    return {"notebook": f"{notebook}.ipynb", "content": content, "nonce": secrets.token_hex(16), "sent": time.time()}


async def _send(client, url: str, token: str, body: dict | None = None) -> tuple[int, dict]:
    request = HTTPRequest(
        url,
        method="POST" if body is not None else "GET",
        body=json.dumps(body) if body is not None else None,
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        request_timeout=POLL_SECONDS + 30,
    )
    try:
        response = await client.fetch(request)
    except HTTPClientError as error:
        response = error.response
        if response is None:
            return error.code, {}
    return response.code, json.loads(response.body or b"{}")


def load_lines(result: LoadResult) -> list[str]:
    lines = [
        f"pre-check load on {result.notebook}: {result.workers} checks at a time, {result.cores} cores, "
        f"load {result.load_average:.1f} at the start",
        f"engine: {result.engine}",
        f"one student alone, service warm: first result in {result.lone_first_result:.2f} s",
        "",
        f"{'students':>8}  {'p50 s':>7}  {'p95 s':>7}  {'rejected for cooldown':>21}  {'unanswered':>10}  {'wall s':>7}  {'cores busy':>10}  {'stolen':>8}",
    ]
    for cohort in result.cohorts:
        lines.append(
            f"{cohort.students:>8}  {cohort.p50:>7.2f}  {cohort.p95:>7.2f}  {cohort.rejected_for_cooldown:>21}  "
            f"{cohort.unanswered:>10}  {cohort.wall_seconds:>7.1f}  {cohort.cores_busy_words:>10}  {cohort.cores_stolen_words:>8}"
        )
    return lines
