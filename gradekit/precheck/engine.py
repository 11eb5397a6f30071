"""The sealed engine behind the pre-check: warm grading processes of the TA's own grader, kept for the service's life.

Each process keeps one `ScratchGrader` (nbgrader loaded once, a warm zygote
with torch imported), exactly as a worker of `python -m gradekit grade` does,
so a pre-check gives the grade the TA's run would give. The grading template
(the assignment's source and a gradebook that knows its cells) is generated
once, at start, in the service's own folder, with a copy per notebook whose
gradebook knows that notebook alone (notebook_templates.py): a check grades
one. Processes start without the service's hub credentials in their
environment, and every uploaded notebook is written to a private folder that
is removed once it is graded.

Every check is graded under a budget (`Precheck.check_seconds`, task_budget.py):
a grading process that passes it is killed, a fresh pool takes its place at
once, and the check ends as the student's timeout, or as the grader's failure
when a loaded machine held it back. Closing the engine kills its grading
processes rather than waiting for them.

With `c.Precheck.scheduler` the same checks go to a Dask cluster's workers
instead (cluster_workers.py), graded by the same task from the same template;
the queue, the cooldown and the quota stay here, at the desk.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures.process
import dataclasses
import logging
import os
import secrets
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Protocol

import nbformat

from gradekit.authoring.release import new_workspace
from gradekit.core.course import Course
from gradekit.grading.executors import grade_task
from gradekit.grading.forked_workers import worker_context
from gradekit.grading.grading_run import GradingRun
from gradekit.grading.idle_allowance import TASK_IDLE_FACTOR
from gradekit.grading.submission_grader import GradedSubmission
from gradekit.grading.task_budget import TaskBudget, ended_by_timer, over_budget, within_budget
from gradekit.grading.warm_kernels import kernels_prefix, name_kernel_folders_after
from gradekit.precheck.cluster_workers import ClusterWorkers
from gradekit.precheck.notebook_templates import notebook_templates
from gradekit.precheck.tries import Try, graded_within_attempts

log = logging.getLogger(__name__)

# The service's own credentials for the hub: no grading process (nor kernel) may hold them.
HUB_VARIABLES = ("JUPYTERHUB_", "JPY_")
# Under the run's folder: one empty file per grading process, named by its pid, so that closing can end them.
PROCESSES_FOLDER = "processes"


def without_hub_credentials(environment: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in environment.items() if not name.startswith(HUB_VARIABLES)}


def _start_grading_process(run_root: str) -> None:
    """A grading process's start: no hub token, temporary files (kernel folders too) under the run's folder."""
    kept = without_hub_credentials(dict(os.environ))
    os.environ.clear()
    os.environ.update(kept)
    tempfile.tempdir = run_root
    name_kernel_folders_after(Path(run_root).name)
    (Path(run_root) / PROCESSES_FOLDER / str(os.getpid())).touch()


def check_budget(course: Course) -> TaskBudget:
    """One check's budget: `Precheck.check_seconds`, or derived from the cells' time limit when that is 0."""
    idle = TASK_IDLE_FACTOR * course.idle_seconds  # one notebook's
    if course.precheck.check_seconds > 0:
        return TaskBudget(course.precheck.check_seconds, idle)
    return TaskBudget.for_cells(course.cell_timeout, attempts=course.grader_attempts, idle_seconds=course.idle_seconds)


def _our_child(pid: int) -> bool:
    """`pid` is still a process this one started (a pid file outlives its process; the number may be reused)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid()


class SealedEngine:
    """The grading template, the private folder of uploads and the check's budget, over the runner that grades.

    The runner is the service's own warm processes (`LocalProcesses`), or, with `c.Precheck.scheduler`,
    a Dask cluster's workers (`ClusterWorkers`, cluster_workers.py); the desk in front decides which
    check goes next either way.
    """

    def __init__(self, course: Course, state_dir: Path, workers: int):
        self.course = course
        self.workers = workers
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.state_dir, 0o700)  # hidden tests and uploaded answers live below it
        template, per_notebook = self.state_dir / "template", self.state_dir / "notebook-templates"
        # Both hold the hidden tests: made afresh at each start, removed at close, never readable by a kernel.
        self.template_folders = (template, per_notebook)
        for folder in self.template_folders:
            shutil.rmtree(folder, ignore_errors=True)
        notebooks = tuple(sorted(path.stem for path in course.source_dir.glob("*.ipynb")))
        self.template = new_workspace(course, template, notebooks)
        run = GradingRun.of(course)
        # Every template holds the hidden tests: no kernel may read one, its own notebook's or another's.
        held = tuple(str(folder.resolve()) for folder in self.template_folders)
        dataclasses.replace(run, protected_roots=run.protected_roots + held).write(self.template.root)
        self.notebook_templates = notebook_templates(self.template, per_notebook)
        self.incoming = self.state_dir / "incoming"
        shutil.rmtree(self.incoming, ignore_errors=True)
        self.incoming.mkdir(mode=0o700)
        self.budget = check_budget(course)
        self.runner = self._runner(course.precheck.scheduler)

    def _runner(self, scheduler: str) -> Runner:
        if not scheduler:
            return LocalProcesses(self.state_dir, self.workers, self.budget)
        return ClusterWorkers.connect(scheduler, self.workers, self.budget)

    def source_notebooks(self) -> dict:
        """Notebook name -> its trusted source (with the hidden tests), as the grading template holds it."""
        return {
            path.stem: nbformat.read(path, as_version=4) for path in sorted(self.template.source_dir.glob("*.ipynb"))
        }

    async def grade(self, student: str, notebook: str, content: bytes) -> GradedSubmission:
        """Grade one uploaded notebook of `student` on the runner, under the check's budget.

        A worker lost for another reason is the grader's failure: the check is sent again, as a cohort's
        submission is, and reported as the grader's when every try was lost (tries.py).
        """
        folder = self.incoming / secrets.token_hex(8) / self.course.assignment_id
        folder.mkdir(parents=True, mode=0o700)
        (folder / f"{notebook}.ipynb").write_bytes(content)
        template = str(self.notebook_templates[notebook])
        try:
            return await graded_within_attempts(
                lambda: self.runner.graded_once(template, student, notebook, folder),
                student,
                self.course.grader_attempts,
                self.course.retry_backoff_seconds,
            )
        finally:
            shutil.rmtree(folder.parent, ignore_errors=True)

    async def warm(self) -> None:
        """Grade a blank notebook once per worker, so the first student's check finds them warm."""
        release = sorted(self.template.release_dir.glob("*.ipynb"))[0]
        content = release.read_bytes()
        await asyncio.gather(*(self.grade(f"warm-up-{n}", release.stem, content) for n in range(self.workers)))

    def close(self) -> None:
        """End the grading now (a worker may be stuck on a check) and remove every file of it.

        The templates go too: they hold the hidden tests, which should not wait on disk for the
        service's next start.
        """
        self.runner.close(tuple(self.notebook_templates.values()))
        for folder in self.template_folders:
            shutil.rmtree(folder, ignore_errors=True)


class Runner(Protocol):
    words: str  # which engine this is, in a few words

    async def graded_once(self, template_root: str, student: str, notebook: str, folder: Path) -> Try: ...

    def close(self, template_roots: tuple[Path, ...]) -> None: ...


class LocalProcesses:
    """`workers` warm grading processes on the service's machine, each check under its budget."""

    def __init__(self, state_dir: Path, workers: int, budget: TaskBudget):
        self.workers = workers
        self.budget = budget
        self.words = f"{workers} warm grading process(es) on this machine"
        self._run_root = Path(tempfile.mkdtemp(prefix="gradekit-precheck-", dir=state_dir))
        (self._run_root / PROCESSES_FOLDER).mkdir()
        self._pool = self._new_pool()

    def _new_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            self.workers,
            mp_context=worker_context(),  # forked, each with an event loop of its own
            initializer=_start_grading_process,
            initargs=(str(self._run_root),),
        )

    async def graded_once(self, template_root: str, student: str, notebook: str, folder: Path) -> Try:
        """The check's outcome; none when its grading process was lost for no reason of the budget's."""
        verdict = folder.parent / "over-budget.json"
        pool, started = self._pool, time.monotonic()
        arguments = (self.budget, str(verdict), grade_task, template_root, str(folder), student)
        try:
            return Try(await asyncio.get_running_loop().run_in_executor(pool, within_budget, *arguments))
        except concurrent.futures.process.BrokenProcessPool:
            if self._pool is pool:  # the first check to hear of it replaces the pool; the others use the new one
                log.warning("a grading process died while grading %s's %s; starting fresh ones", student, notebook)
                pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
            ended = over_budget(verdict) or ended_by_timer(time.monotonic() - started, self.budget)
            if ended is not None:
                log.warning("%s's check of %s passed its budget: %s", student, notebook, ended.description)
            return Try(None if ended is None else ended.row(student))

    def close(self, template_roots: tuple[Path, ...]) -> None:
        """Kill the grading processes rather than wait for them, and remove every file of theirs."""
        for pid_file in (self._run_root / PROCESSES_FOLDER).iterdir():
            if _our_child(int(pid_file.name)):
                os.kill(int(pid_file.name), signal.SIGKILL)
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._run_root, ignore_errors=True)
        for base in {tempfile.gettempdir(), "/tmp"}:
            for folder in Path(base).glob(f"{kernels_prefix(self._run_root.name)}*"):
                shutil.rmtree(folder, ignore_errors=True)
