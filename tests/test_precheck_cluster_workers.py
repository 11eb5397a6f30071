"""The pre-check on a Dask cluster: a lost worker is the grader's to retry, a check never waits for ever.

The unit tests stand a scripted client in for distributed's; the cluster tests
run the real service against a real scheduler and worker processes.
"""

import asyncio
import dataclasses
import os
import types
from pathlib import Path

import pytest
from distributed import Client
from distributed.client import FutureCancelledError
from distributed.comm import CommClosedError
from distributed.scheduler import KilledWorker
from precheck_fixtures import NOTEBOOK, answered, call, checked, endless_reply_upload, graded, identify, run_apart
from services import dask_cluster, kill_a_busy_worker

from gradekit.core.failures import GraderCause
from gradekit.core.status import Status
from gradekit.grading.cpu_clock import Verdict
from gradekit.grading.executors import grade_within_budget
from gradekit.grading.task_budget import LAST_RESORT_SECONDS, OverBudget, TaskBudget
from gradekit.precheck.cluster_workers import PRECHECK_PRIORITY, ClusterWorkers
from gradekit.precheck.run import DEFAULT_PREFIX, running_service

# Scripted clusters ----------------------------------------------------------------------------------------------


@dataclasses.dataclass
class ScriptedTask:
    key: str
    outcome: object  # the row it gives back, or the exception its result raises
    cancelled: bool = False

    def result(self, timeout=None):
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome

    def cancel(self):
        self.cancelled = True


class ScriptedClient:
    """Stands in for distributed's Client: every task ends with `outcome`; the scheduler saw it started `starts` times."""

    def __init__(self, outcome, starts: int = 1):
        self.outcome, self.starts = outcome, starts
        self.sent: list[tuple] = []
        self.tasks: list[ScriptedTask] = []
        self.scheduler = types.SimpleNamespace(get_story=self._story)

    def submit(self, function, *arguments, key, pure, priority):
        self.sent.append((function, arguments, key, priority))
        self.tasks.append(ScriptedTask(key, self.outcome))
        return self.tasks[-1]

    def sync(self, function, **keywords):
        return function(**keywords)

    def _story(self, keys_or_stimuli):
        if self.starts is None:
            raise CommClosedError("the scheduler went away")
        (key,) = keys_or_stimuli
        started = [(key, "waiting", "processing", {}, "compute", 0.0)] * self.starts
        return [*started, (key, "processing", "memory", {}, "finished", 1.0)]


def _tried(client, budget=TaskBudget(1.0)):
    workers = ClusterWorkers(client, 1, budget, "a scripted cluster")
    return run_apart(workers.graded_once("/template", "ana", NOTEBOOK, Path("/incoming/1/autograd")))


@pytest.mark.unit
def test_a_check_is_sent_as_the_cohorts_grading_task_ahead_of_cohort_work_with_its_budget_paths_and_id_only():
    client = ScriptedClient(graded(2.0))
    sent = _tried(client, TaskBudget(3.0))
    assert sent.graded is client.outcome and sent.starts == 1
    ((function, arguments, key, priority),) = client.sent
    assert function is grade_within_budget
    assert arguments == (TaskBudget(3.0), "/template", "/incoming/1/autograd", "ana")
    assert priority == PRECHECK_PRIORITY > 0 and "ana" not in key


@pytest.mark.unit
@pytest.mark.parametrize("verdict", [Verdict.OVER_LIMIT, Verdict.SAT_IDLE, Verdict.OVERLOADED])
def test_a_check_its_budget_ended_on_the_worker_gets_the_row_the_services_own_processes_give(verdict):
    ended = OverBudget(verdict, "read 7.0 s of CPU")
    sent = _tried(ScriptedClient(ended))
    assert sent.graded == ended.row("ana") and sent.starts == 1


@pytest.mark.unit
def test_a_check_the_scheduler_moved_from_a_lost_worker_says_how_often_it_was_started():
    sent = _tried(ScriptedClient(graded(2.0), starts=2))
    assert sent.graded is not None and sent.starts == 2


@pytest.mark.unit
@pytest.mark.parametrize(
    "lost",
    [
        KilledWorker("precheck-x", types.SimpleNamespace(address="tcp://127.0.0.1:1"), 3),
        FutureCancelledError("precheck-x", "scheduler-connection-lost"),
        CommClosedError("in <TCP>: Stream is closed"),
    ],
)
def test_a_lost_worker_or_connection_gives_no_row_so_that_the_check_is_sent_again(lost):
    sent = _tried(ScriptedClient(lost, starts=4))
    assert sent.graded is None and sent.starts == 4


@pytest.mark.unit
def test_a_check_not_back_within_its_budget_is_cancelled_and_ends_as_the_graders_failure():
    client = ScriptedClient(TimeoutError())
    sent = _tried(client, TaskBudget(2.0))
    assert sent.graded is not None and client.tasks[0].cancelled
    assert sent.graded.status is Status.GRADER_ERROR and sent.graded.cause is GraderCause.STALLED
    assert f"within {TaskBudget(2.0).wall_seconds + LAST_RESORT_SECONDS:.0f} s" in sent.graded.message


@pytest.mark.unit
def test_a_task_that_failed_on_the_worker_is_the_graders_error_and_not_sent_again():
    sent = _tried(ScriptedClient(ModuleNotFoundError("No module named 'gradekit'")))
    assert sent.graded is not None and sent.graded.cause is GraderCause.INTERNAL_ERROR


@pytest.mark.unit
def test_a_scheduler_that_cannot_say_how_often_it_started_a_check_costs_the_check_nothing():
    sent = _tried(ScriptedClient(graded(2.0), starts=None))
    assert sent.graded is not None and sent.starts == 1


# A real cluster ---------------------------------------------------------------------------------------------------

QUOTA = 5


@pytest.fixture(scope="module")
def checks_on_a_cluster(course, manifest, tmp_path_factory):
    """Ana's check on a quiet cluster of two worker processes, then Ben's with its worker killed while it grades.

    Returns both replies, the rows the engine gave the desk, Ben's standing and the killed worker's address.
    """
    right = answered(course, manifest)
    state = tmp_path_factory.mktemp("precheck-on-cluster") / "state"
    with dask_cluster(workers=2) as address, Client(address, set_as_default=False) as watcher:
        settings = dataclasses.replace(course.precheck, scheduler=address, workers=2, daily_quota=QUOTA)
        on_cluster = dataclasses.replace(course, precheck=settings)

        async def scenario():
            async with running_service(on_cluster, state, "127.0.0.1", 0, DEFAULT_PREFIX, identify) as running:
                rows = []
                grade = running.desk.grade

                async def kept(student, notebook, content):
                    rows.append(await grade(student, notebook, content))
                    return rows[-1]

                running.desk.grade = kept
                anas = await checked(running.port, "token-of-ana", right)
                killing = asyncio.ensure_future(asyncio.to_thread(kill_a_busy_worker, watcher))
                bens = await checked(running.port, "token-of-ben", right)
                _, standing = await call(running.port, "api/standing", "token-of-ben")
                return anas, bens, rows, standing, await killing

        return run_apart(scenario())


@pytest.mark.cluster
def test_the_reference_earns_full_marks_on_the_clusters_workers(checks_on_a_cluster):
    anas, _, rows, _, _ = checks_on_a_cluster
    assert anas["result"]["status"] == "graded"
    assert anas["result"]["score"] == anas["result"]["max_score"] > 0
    ana = rows[0]
    assert ana.attempts == 1 and not ana.worker.endswith(f":{os.getpid()}")  # graded by a worker process


@pytest.mark.cluster
def test_a_worker_killed_while_grading_costs_the_student_nothing_the_retry_grades_the_check(checks_on_a_cluster):
    _, bens, rows, standing, killed = checks_on_a_cluster
    assert killed
    assert bens["result"]["status"] == "graded"
    assert bens["result"]["score"] == bens["result"]["max_score"] > 0
    ben = rows[1]
    assert ben.status is Status.GRADED and ben.attempts > 1
    assert standing["notebooks"][f"{NOTEBOOK}.ipynb"]["left_today"] == QUOTA - 1  # the one check, counted once


CHECK_SECONDS = 10.0  # CPU seconds per check, as the service's own processes are tested with


@pytest.mark.cluster
def test_an_upload_whose_reply_never_finishes_decoding_holds_up_no_classmate_on_a_one_worker_cluster(
    course, manifest, tmp_path
):
    """One worker with one thread: Mallory's check never finishes decoding; Ben's, sent after it, is graded in full."""
    hostile, right = endless_reply_upload(course, manifest), answered(course, manifest)
    settings = dataclasses.replace(course.precheck, workers=1, check_seconds=CHECK_SECONDS, daily_quota=QUOTA)
    with dask_cluster(workers=1) as address:
        on_cluster = dataclasses.replace(course, precheck=dataclasses.replace(settings, scheduler=address))

        async def scenario():
            async with running_service(
                on_cluster, tmp_path / "state", "127.0.0.1", 0, DEFAULT_PREFIX, identify
            ) as running:
                mallorys = await checked(running.port, "token-of-mallory", hostile)
                bens = await checked(running.port, "token-of-ben", right)
                return mallorys, bens

        mallorys, bens = run_apart(scenario())
    # Before, Mallory's check held the worker's one thread for ever: Ben's waited out its patience, ungraded.
    assert mallorys["result"]["status"] in {"not graded", "held for a TA"}
    assert bens["result"]["status"] == "graded"
    assert bens["result"]["score"] == bens["result"]["max_score"] > 0
