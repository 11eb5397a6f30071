"""The pre-check's checks graded by a Dask cluster's workers, the engine the cohort's `grade --scheduler` uses.

Each check the desk lets through is one task of the cohort's kind
(`submit_grading`: `grade_task` on the template's and the upload's paths,
which the workers see at the same place), sent ahead of any cohort work on
the cluster. Only paths, the check's budget and the student's id travel:
nothing of the service's environment, so never its hub credentials.

The worker grades the check under its budget, as the service's own processes
do: a check that passes it is the student's timeout (or the grader's failure
when a loaded worker held it back), and the worker is free for the next one.

A worker lost while grading (it died, or the connection to it or to the
scheduler closed) is the grader's failure: Dask moves the task to another
worker by itself, and a task lost more often than the scheduler allows comes
back as lost, to be sent again (tries.py). The scheduler's record of the task
says how many workers started it. A check still not back past its budget's
wall-clock backstop (the cluster cannot say why) is cancelled and ends as the
grader's failure, as an overdue submission of a cohort does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import secrets
from pathlib import Path

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading.executors import cluster_client, crashed_task, forget_on_cluster, submit_grading, worker_lost
from gradekit.grading.submission_grader import GradedSubmission
from gradekit.grading.task_budget import LAST_RESORT_SECONDS, OverBudget, TaskBudget
from gradekit.precheck.tries import Try

log = logging.getLogger(__name__)

# A student is waiting on a pre-check; a cohort's run is not: the cluster starts checks first.
PRECHECK_PRIORITY = 10


def lost_on_the_cluster(error: BaseException) -> bool:
    """The worker died, the task was dropped with the scheduler's connection, or a connection closed."""
    if isinstance(error, TimeoutError):  # an OSError too, but the check's own patience, not a lost worker
        return False
    return worker_lost(error) or isinstance(error, (concurrent.futures.CancelledError, OSError))


def starts_of(client, key: str) -> int:
    """How many times the scheduler gave the task `key` to a worker (it moves a lost worker's tasks); 1 if unsaid."""
    try:
        story = client.sync(client.scheduler.get_story, keys_or_stimuli=[key])
    except Exception:  # the record is a count for the row, never a reason to lose the check's result
        log.warning("the scheduler did not say how often %s was started", key, exc_info=True)
        return 1
    # A step of the scheduler's story: (key, from state, to state, recommendations, stimulus, time).
    return max(1, sum(1 for step in story if step[0] == key and step[2] == "processing"))


class ClusterWorkers:
    """The workers of the Dask cluster at one scheduler's address, `workers` checks at a time."""

    def __init__(self, client, workers: int, budget: TaskBudget, words: str):
        self.client = client
        self.budget = budget
        self.patience = budget.wall_seconds + LAST_RESORT_SECONDS
        self.words = words
        # The sending is the client's; these threads only wait for results, one per check in flight (warm-up included).
        self._waiting = concurrent.futures.ThreadPoolExecutor(2 * workers, thread_name_prefix="precheck-cluster")

    @classmethod
    def connect(cls, scheduler: str, workers: int, budget: TaskBudget) -> ClusterWorkers:
        client = cluster_client(scheduler)
        size = len(client.scheduler_info().get("workers", {}))
        return cls(client, workers, budget, f"a Dask cluster at {scheduler}, {size} worker(s) at the start")

    async def graded_once(self, template_root: str, student: str, notebook: str, folder: Path) -> Try:
        key = f"precheck-{notebook}-{secrets.token_hex(8)}"  # the dashboard shows keys: no student's name in them
        task = submit_grading(self.client, Path(template_root), folder, student, self.budget, key, PRECHECK_PRIORITY)
        return await asyncio.get_running_loop().run_in_executor(self._waiting, self._outcome, task, student)

    def _outcome(self, task, student: str) -> Try:
        try:
            graded: GradedSubmission | OverBudget = task.result(timeout=self.patience)
        except TimeoutError:
            task.cancel()
            stalled = GraderFailure(GraderCause.STALLED, f"the cluster did not return it within {self.patience:.0f} s")
            return Try(crashed_task(student, stalled))
        except Exception as error:
            if not lost_on_the_cluster(error):
                return Try(crashed_task(student, error))
            log.warning("a cluster worker grading %s was lost: %s", task.key, error)
            return Try(None, starts_of(self.client, task.key))
        if isinstance(graded, OverBudget):
            log.warning("%s's check (%s) passed its budget: %s", student, task.key, graded.description)
            graded = graded.row(student)
        return Try(graded, starts_of(self.client, task.key))

    def close(self, template_roots: tuple[Path, ...]) -> None:
        """Remove the templates' copies from the workers and let the cluster go; the cluster itself keeps running."""
        try:
            for template_root in template_roots:
                try:
                    forget_on_cluster(self.client, template_root)
                except (OSError, TimeoutError):
                    log.warning("the cluster's workers could not be asked to forget %s", template_root, exc_info=True)
        finally:
            self._waiting.shutdown(wait=False, cancel_futures=True)
            self.client.close()
