"""Where submissions are graded: worker processes on this machine, or a Dask distributed cluster.

Both run the same `ScratchGrader` and yield `GradedSubmission`s as they finish;
a worker keeps its grader (and so its loaded nbgrader) for all its tasks. A
worker lost while grading is the grader's failure: its submissions are graded
again on a fresh worker, a bounded number of times (the run's settings), and
one still lost after that is a grader-error row, never a score. On this
machine every submission is graded under a budget (task_budget.py): a worker
that passes it is killed and replaced, the row is the student's timeout (or the
grader's failure on a loaded machine, tried again), and the rest are graded.

A cluster's worker grades under the same budget: it hands each task to a warm
grading process it forked (forked_grader.py), whose watchdog kills only that
process, so a stuck submission frees the worker's thread when its budget ends
and the worker grades the next one. The verdict comes back to the coordinator,
which words the row as this machine's pool does.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import concurrent.futures.process
import contextlib
import dataclasses
import gc
import importlib
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Generator, Iterable, Iterator

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.grading import kept_parents
from gradekit.grading.forked_grader import ForkedGrader, GradingProcessLost
from gradekit.grading.forked_workers import worker_context
from gradekit.grading.grader_failures import backoff_seconds
from gradekit.grading.grading_run import GradingRun
from gradekit.grading.internal_errors import crashed
from gradekit.grading.phase_clock import Phase
from gradekit.grading.scratch_gradebook import stop_sharing
from gradekit.grading.submission_grader import WORKER_ID, GradedSubmission, ScratchGrader
from gradekit.grading.task_budget import (
    LAST_RESORT_SECONDS,
    OverBudget,
    TaskBudget,
    ended_by_timer,
    over_budget,
    within_budget,
)
from gradekit.grading.warm_kernels import (
    SHORT_TEMPORARY_FOLDER,
    discard_zygote,
    kernels_prefix,
    name_kernel_folders_after,
)


@dataclasses.dataclass(frozen=True)
class NotStarted:
    """How a task the pool broke before it began ended: it has used none of its tries."""


NOT_STARTED = NotStarted()

if TYPE_CHECKING:
    from typing import TypeAlias

    from distributed import Client, Future

    # How a task ended in a pool: its row, the budget that ended its worker, or the pool's breakdown.
    Outcome: TypeAlias = GradedSubmission | OverBudget | concurrent.futures.process.BrokenProcessPool | NotStarted
    # What a cluster's task gives back: its row, or the budget that ended its grading process.
    Budgeted: TypeAlias = GradedSubmission | OverBudget

Task = tuple[Path, str]  # (submission folder, student id)


log = logging.getLogger(__name__)

_graders: dict[str, ScratchGrader] = {}
GENERATION_0_THRESHOLD = 10_000  # new objects between two collections of the youngest generation (Python's: 700)
# What the course's checks import at their first use, which runs in the grading process (sealed test cells):
# torch.testing.assert_close imports torch.distributed.tensor at its first call, about 0.5 s that a
# pre-check's first student of each grading process waited for. Imported when the grader is built instead.
IMPORTED_BY_CHECKS = ("torch.distributed.tensor",)


def _grader_for(template_root: str) -> ScratchGrader:
    """This process's grader for a template, built on first use and kept."""
    if template_root not in _graders:
        environment = grading_environment()  # read before the clear: it starts from this process's own
        os.environ.clear()
        os.environ.update(environment)
        scratch = Path(tempfile.mkdtemp(prefix="gradekit-worker-"))
        atexit.register(shutil.rmtree, scratch, True)
        _graders[template_root] = ScratchGrader(Path(template_root), scratch / "course")
        for name in IMPORTED_BY_CHECKS:
            with contextlib.suppress(ImportError):  # a build of torch without it: the checks never import it either
                importlib.import_module(name)
        # What the worker holds now lives as long as it does: its full collections skip it from here on.
        gc.freeze()
        # Most of what grading a submission makes is freed as it goes; collected every 700 new objects
        # (Python's default), enough of it lived on to set off a full collection every few
        # submissions (about 10 ms a pre-check of 010, all told). Collected ten times less often, it dies first.
        gc.set_threshold(GENERATION_0_THRESHOLD, *gc.get_threshold()[1:])
    return _graders[template_root]


def _temporary_files_under(folder: str) -> None:
    """A pool worker's start: its temporary files go under `folder`, which its coordinator removes.

    Its kernels' folders too, unless that folder's path is too long for their sockets: then they
    go to a short place, named after the run (see `_remove_kernel_folders`).
    """
    tempfile.tempdir = folder
    name_kernel_folders_after(Path(folder).name)


def _pool_worker_start(folder: str, loan: kept_parents.Loan | None) -> None:
    """A pool worker's start: temporary files under `folder`, and a warm parent of the loan, if one is left."""
    _temporary_files_under(folder)
    if loan is not None:
        loan.take()


def _remove_kernel_folders(run_root: str) -> None:
    """The folders of kernel folders a run's workers made outside the run's folder (their sockets needed short paths)."""
    for base in {tempfile.gettempdir(), SHORT_TEMPORARY_FOLDER}:
        for folder in Path(base).glob(f"{kernels_prefix(Path(run_root).name)}*"):
            shutil.rmtree(folder, ignore_errors=True)


def submission_budget(template_root: Path) -> TaskBudget:
    """The budget of one submission of the run that wrote `template_root`: from its cells' limit and notebooks."""
    run = GradingRun.read(template_root)
    notebooks = len(list(Path(template_root).glob("source/*/*.ipynb")))
    return TaskBudget.for_cells(run.cell_timeout, notebooks, run.attempts, run.kit.idle_seconds)


def forget_template(template_root: str) -> None:
    """Remove this process's scratch course for a template and end its zygote (a cluster worker, after a run).

    Its forked grading processes hold the template's copies too: they are ended, the busy ones once they finish.
    """
    grader = _graders.pop(template_root, None)
    gc.unfreeze()  # where this process built the run's grader itself, what it held may be collected again
    discard_zygote()
    if grader is not None:
        grader.unsynced.remove()
        stop_sharing(grader.course.db_url)
        shutil.rmtree(grader.course.root.parent, ignore_errors=True)
    _grading_processes.retire_all()


def grade_task(template_root: str, submission_dir: str, student_id: str) -> GradedSubmission:
    """The unit of work shipped to a worker; a failure of our own comes back as a row with its traceback.

    The first task of a worker carries the worker's start (its grader built) among its phases.
    """
    try:
        started, fresh = time.monotonic(), template_root not in _graders
        grader = _grader_for(template_root)
        built = time.monotonic() - started if fresh else 0.0
        graded = grader.grade(Path(submission_dir), student_id)
        return dataclasses.replace(graded, phases=graded.phases.with_phase(Phase.WORKER_START, built))
    except Exception as error:
        return crashed(student_id, error, WORKER_ID)


class _GradingProcesses:
    """A cluster worker's forked grading processes: one per task in flight, kept warm between tasks."""

    def __init__(self) -> None:
        self.idle: list[ForkedGrader[GradedSubmission]] = []
        self.lock = threading.Lock()
        self.generation = 0  # raised by `retire_all`: a process of an earlier generation is ended when it is back

    def take(self) -> tuple[ForkedGrader[GradedSubmission], int]:
        """A warm idle process that is still alive, or a new one: one that died idle costs no student a try."""
        dead = []
        with self.lock:
            generation = self.generation
            while self.idle and not self.idle[-1].alive:
                dead.append(self.idle.pop())
            warm = self.idle.pop() if self.idle else None
        for process in dead:
            process.close(_remove_kernel_folders)
        # `grade_task` as this module holds it now: the grading process keeps that one
        return warm or ForkedGrader(grade_task, _temporary_files_under), generation

    def give_back(self, process: ForkedGrader[GradedSubmission], generation: int) -> None:
        with self.lock:
            if process.alive and generation == self.generation:
                self.idle.append(process)
                return
        process.close(_remove_kernel_folders)

    def retire_all(self) -> None:
        with self.lock:
            self.generation += 1
            retired, self.idle = self.idle, []
        for process in retired:
            process.close(_remove_kernel_folders)


_grading_processes = _GradingProcesses()
atexit.register(_grading_processes.retire_all)


def grade_within_budget(budget: TaskBudget, template_root: str, submission_dir: str, student_id: str) -> Budgeted:
    """The cluster's unit of work: `grade_task` in a warm grading process forked from this worker, under `budget`.

    Past its budget the process is killed and its verdict comes back instead of a row; a process lost
    otherwise raises `GradingProcessLost`, a lost worker to the coordinator.
    """
    process, generation = _grading_processes.take()
    try:
        return process.run(budget, template_root, submission_dir, student_id)
    finally:
        _grading_processes.give_back(process, generation)


def _started_within_budget(
    budget: TaskBudget, verdict_file: str, task: Callable[..., GradedSubmission], *args: object
) -> GradedSubmission:
    """A pool worker's task: a mark beside its verdict file that it started, then the task within its budget."""
    _started_mark(Path(verdict_file)).touch()
    return within_budget(budget, verdict_file, task, *args)


def _last_row(
    student: str, outcome: OverBudget | concurrent.futures.process.BrokenProcessPool, attempts: int
) -> GradedSubmission:
    """The row of a task cut short on its last try: the grader's failure, never a score."""
    if isinstance(outcome, OverBudget):
        return outcome.row(student, attempts)
    return crashed_task(student, outcome, attempts)


def _started_mark(verdict_file: Path) -> Path:
    return verdict_file.with_name(verdict_file.name + ".started")


def _in_order(tasks: list[Task], tried: dict[Task, int]) -> list[Task]:
    """Tasks cut short first (they have waited longest), each group in its first order."""
    return sorted(tasks, key=lambda task: -tried.get(task, 0))


def crashed_task(student_id: str, error: BaseException, attempts: int = 1) -> GradedSubmission:
    """A task that raised or whose worker was lost; a worker's traceback rides along as the error's cause."""
    if worker_lost(error):
        lost = GraderFailure(GraderCause.WORKER_LOST, "the grading worker process died while grading this submission")
        lost.__cause__ = error
        error = lost
    return crashed(student_id, error, attempts=attempts)


def worker_lost(error: BaseException) -> bool:
    """The worker process died (this machine's pool, a cluster worker's forked process) or left the cluster too often."""
    lost_here = (concurrent.futures.process.BrokenProcessPool, GradingProcessLost)
    return isinstance(error, lost_here) or type(error).__name__ == "KilledWorker"


class LocalExecutor:
    """`jobs` worker processes on this machine, each grading whole submissions, each under its budget.

    When a worker process dies the whole pool breaks. The submissions that had
    not started are graded in a fresh shared pool, as if nothing happened. When
    a budget explains the break (its verdict was left), those in flight on other
    workers are graded again in it too, and lose no try to another's budget;
    otherwise the pool cannot tell which one killed it, and each is graded again
    in a fresh pool of its own, with backoff, until it is graded or its tries run
    out. So one student whose budget ends costs the rest of the cohort one
    restarted pool, never a try and never a one-by-one grading. A worker that its budget ended says so: that submission's row is the
    student's timeout at once, unless the machine held the worker back.
    """

    def __init__(
        self,
        jobs: int,
        task: Callable[[str, str, str], GradedSubmission] = grade_task,
        budget: TaskBudget | None = None,
        lends_parents: bool | None = None,
    ):
        self.jobs = jobs
        self.workers = jobs
        self.task = task  # a module-level function (template, folder, student) -> GradedSubmission
        self.budget = budget  # None: derived from the run's cell limit (`submission_budget`)
        # Whether its workers are lent this process's warm parents (kept_parents.py): by default when
        # the task is the kit's own, the one that forks kernels.
        self.lends_parents = task is grade_task if lends_parents is None else lends_parents

    def grade_all(self, template_root: Path, tasks: Iterable[Task]) -> Iterator[GradedSubmission]:
        budget = self.budget or submission_budget(template_root)
        run = GradingRun.read(template_root)
        waiting, tried, suspects = list(tasks), dict[Task, int](), list[Task]()
        while waiting:
            if retried := max((tried.get(task, 0) for task in waiting), default=0):
                time.sleep(backoff_seconds(retried + 1, run.first_wait))  # a loaded machine's time to recover
            cut_short: list[tuple[Task, OverBudget | concurrent.futures.process.BrokenProcessPool]] = []
            this_round, waiting, explained = _in_order(waiting, tried), [], False
            for task, outcome in self._run(template_root, this_round, self.jobs, budget):
                explained = explained or isinstance(outcome, OverBudget)
                if isinstance(outcome, NotStarted):
                    waiting.append(task)
                elif isinstance(outcome, OverBudget) and outcome.students_fault:
                    yield outcome.row(task[1], tried.get(task, 0) + 1)
                elif isinstance(outcome, (OverBudget, concurrent.futures.process.BrokenProcessPool)):
                    cut_short.append((task, outcome))
                else:
                    yield dataclasses.replace(outcome, attempts=outcome.attempts + tried.get(task, 0))
            for task, outcome in cut_short:  # in flight when the pool broke: another's budget, or its own doing?
                if isinstance(outcome, OverBudget) or not explained:  # a try of its own; another's kill costs none
                    tried[task] = tried.get(task, 0) + 1
                if tried.get(task, 0) >= run.attempts:
                    yield _last_row(task[1], outcome, tried[task])
                else:
                    (waiting if explained else suspects).append(task)
            if not explained and not cut_short:
                break  # a pool that broke before anything started: see below, one by one
        for task in suspects + waiting:
            yield self._alone(template_root, task, run, budget, tried.get(task, 0))

    def _alone(
        self, template_root: Path, task: Task, run: GradingRun, budget: TaskBudget, used: int
    ) -> GradedSubmission:
        """`task` in fresh pools of one worker, after the `used` tries it already had in shared ones."""
        attempts, outcome = run.attempts, None
        for attempt in range(used + 1, attempts + 1):
            if attempt > 1:
                time.sleep(backoff_seconds(attempt, run.first_wait))
            started = time.monotonic()
            ((_, outcome),) = self._run(template_root, [task], 1, budget)
            if isinstance(outcome, concurrent.futures.process.BrokenProcessPool):
                outcome = ended_by_timer(time.monotonic() - started, budget) or outcome
            if isinstance(outcome, OverBudget) and outcome.students_fault:
                return outcome.row(task[1], attempt)
            if isinstance(outcome, GradedSubmission):
                return dataclasses.replace(outcome, attempts=outcome.attempts + attempt - 1)
        if isinstance(outcome, OverBudget):
            return outcome.row(task[1], attempts)
        return crashed_task(task[1], concurrent.futures.process.BrokenProcessPool("the worker died"), attempts)

    def _run(
        self, template_root: Path, tasks: list[Task], jobs: int, budget: TaskBudget
    ) -> Iterator[tuple[Task, Outcome]]:
        """(task, GradedSubmission, the OverBudget that ended its worker or the exception it died with), as they finish."""
        workers = max(1, min(jobs, len(tasks)))
        loan = self._lend(template_root, workers) if self.lends_parents else None
        ended_whole = False
        try:
            ended_whole = yield from self._pooled(template_root, tasks, workers, budget, loan)
        finally:  # a parent of a run that did not end whole may hold a lost worker's kernel: it is ended
            kept_parents.give_back(loan, ended_whole)

    def _pooled(
        self, template_root: Path, tasks: list[Task], workers: int, budget: TaskBudget, loan: kept_parents.Loan | None
    ) -> Generator[tuple[Task, Outcome], None, bool]:
        """`_run`'s pool of `workers`, each lent a parent of `loan`; returns whether no worker of it was lost."""
        # Forked workers start with what this process has imported (nbgrader above all), each
        # with an event loop of its own (forked_workers.py).
        context = worker_context()
        broke = False
        # A pool's workers exit without running their exit handlers: every temporary file of
        # theirs (scratch courses with hidden tests, gradebook copies, kernel folders) goes
        # under one folder, removed here once the pool is shut down.
        with (
            tempfile.TemporaryDirectory(prefix="gradekit-run-", ignore_cleanup_errors=True) as run_root,
            concurrent.futures.ProcessPoolExecutor(
                workers, mp_context=context, initializer=_pool_worker_start, initargs=(run_root, loan)
            ) as pool,
        ):
            verdicts = [Path(run_root) / f"over-budget-{n}.json" for n in range(len(tasks))]
            futures = {
                pool.submit(
                    _started_within_budget, budget, str(verdict), self.task, str(template_root), str(folder), student
                ): (
                    (folder, student),
                    verdict,
                )
                for (folder, student), verdict in zip(tasks, verdicts)
            }
            try:
                for future in concurrent.futures.as_completed(futures):
                    task, verdict = futures[future]
                    try:
                        yield task, future.result()
                    except concurrent.futures.process.BrokenProcessPool as error:
                        if not broke:  # a lost worker's kernel may still run in the parent lent to it: ended now
                            kept_parents.end_loan(loan)
                        broke = True
                        started = _started_mark(verdict).exists()
                        yield task, over_budget(verdict) or (error if started else NOT_STARTED)
                    except Exception as error:
                        yield task, crashed_task(task[1], error)
            finally:
                pool.shutdown(wait=True)
                _remove_kernel_folders(run_root)
        return not broke

    @staticmethod
    def _lend(template_root: Path, workers: int) -> kept_parents.Loan | None:
        """This process's warm parents for a pool of `workers`, boxed as the run requires."""
        return kept_parents.lend(workers, GradingRun.read(template_root).kit.allow_unconfined)


class DaskExecutor:
    """A Dask distributed cluster whose workers see the same course directory."""

    def __init__(self, scheduler_address: str):
        self.client = cluster_client(scheduler_address)

    @property
    def workers(self) -> int:
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def grade_all(self, template_root: Path, tasks: Iterable[Task]) -> Iterator[GradedSubmission]:
        """Dask moves the task of a worker that leaves to another; one lost more often than Dask allows is sent again.

        Every submission is graded under its budget on the worker (`grade_within_budget`): one that passes
        it is the student's timeout, or the grader's failure on a loaded worker, sent again as a lost one is.
        The coordinator never waits for ever either: a submission not back within its budget's wall-clock
        backstop times the rounds the cluster needs for the whole cohort is a grader-error row (the cluster
        cannot say whether the submission or a loaded worker was slow), and the run goes on without it.
        However the run ends, its workers forget its template: the next run's checks are never this one's.
        """
        try:
            yield from self._graded(template_root, list(tasks))
        finally:
            try:
                forget_on_cluster(self.client, template_root)
            except Exception as error:  # an unreachable cluster must not hide how the run itself ended
                log.warning("the cluster's workers could not forget the run's template: %s", error)

    def _graded(self, template_root: Path, tasks: list[Task]) -> Iterator[GradedSubmission]:
        run = GradingRun.read(template_root)
        attempts, first_wait = run.attempts, run.first_wait
        budget = submission_budget(template_root)
        rounds = -(-len(tasks) // self.workers)
        patience = budget.wall_seconds * max(rounds, 1) + LAST_RESORT_SECONDS
        deadline = time.monotonic() + patience
        futures = {self._submit(template_root, task, 1, budget): (task, 1) for task in tasks}
        while futures:
            done = self._first_done(list(futures), deadline - time.monotonic())
            if not done:
                yield from self._overdue(futures, patience)
                return
            for future in done:
                task, attempt = futures.pop(future)
                row = _settled(future, task[1], attempt, attempts)
                if row is not None:
                    yield row
                    continue
                time.sleep(backoff_seconds(attempt + 1, first_wait))
                futures[self._submit(template_root, task, attempt + 1, budget)] = (task, attempt + 1)

    @staticmethod
    def _first_done(futures: list, seconds: float) -> set:
        """The futures done once one is, or none when `seconds` pass first."""
        from distributed import wait

        if seconds <= 0:
            return set()
        try:
            return set(wait(futures, timeout=seconds, return_when="FIRST_COMPLETED").done)
        except TimeoutError:
            return set()

    def _overdue(self, futures: dict, patience: float) -> Iterator[GradedSubmission]:
        for future, (task, attempt) in futures.items():
            future.cancel()
            stalled = GraderFailure(GraderCause.STALLED, f"the cluster did not return it within {patience:.0f} s")
            yield crashed_task(task[1], stalled, attempt)

    def _submit(self, template_root: Path, task: Task, attempt: int, budget: TaskBudget) -> Future:
        folder, student = task
        return submit_grading(self.client, template_root, folder, student, budget, f"grade-{student}-try-{attempt}")

    def close(self) -> None:
        self.client.close()


def _settled(future: Future, student: str, attempt: int, attempts: int) -> GradedSubmission | None:
    """The row of a cluster's task that came back, or None when it is to be sent again (its worker was lost)."""
    try:
        outcome = future.result()
    except Exception as error:
        if worker_lost(error) and attempt < attempts:
            return None
        return crashed_task(student, error, attempt)
    if not isinstance(outcome, OverBudget):
        return outcome
    if outcome.students_fault or attempt >= attempts:
        return outcome.row(student, attempt)
    return None  # a loaded worker held it back: the grader's failure, tried again


# The cluster's side, shared by the cohort's runs and the pre-check's service ------------------------------------


def cluster_client(scheduler_address: str) -> Client:
    """A client of the Dask scheduler at `scheduler_address`; it gives up connecting after 30 s."""
    from distributed import Client

    return Client(scheduler_address, timeout="30s")


def submit_grading(
    client: Client, template_root: Path, folder: Path, student: str, budget: TaskBudget, key: str, priority: int = 0
) -> Future:
    """`grade_task` on the cluster under `budget`: its workers read the template and the submission at these paths.

    The future's result is the row, or the `OverBudget` verdict that ended the task (`grade_within_budget`).
    """
    arguments = (budget, str(template_root), str(folder), student)
    return client.submit(grade_within_budget, *arguments, key=key, pure=False, priority=priority)


def forget_on_cluster(client: Client, template_root: Path) -> None:
    """Workers outlive a run: nothing of it (hidden tests, gradebook copies) may stay on them."""
    client.run(forget_template, str(template_root))
