"""Where submissions are graded: worker processes on this machine, or a Dask distributed cluster.

Both run the same `ScratchGrader` and yield `GradedSubmission`s as they finish;
a worker keeps its grader (and so its loaded nbgrader) for all its tasks.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import concurrent.futures.process
import multiprocessing
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from gradekit.core.nbgrader_cli import grading_environment
from gradekit.grading.internal_errors import crashed
from gradekit.grading.submission_grader import WORKER_ID, GradedSubmission, ScratchGrader

Task = tuple[Path, str]  # (submission folder, student id)

_graders: dict[str, ScratchGrader] = {}


def default_jobs() -> int:
    """One worker per core this process may use."""
    return max(1, len(os.sched_getaffinity(0)))


def _grader_for(template_root: str) -> ScratchGrader:
    """This process's grader for a template, built on first use and kept."""
    if template_root not in _graders:
        os.environ.clear()
        os.environ.update(grading_environment())
        scratch = Path(tempfile.mkdtemp(prefix="gradekit-worker-"))
        atexit.register(shutil.rmtree, scratch, True)
        _graders[template_root] = ScratchGrader(Path(template_root), scratch / "course")
    return _graders[template_root]


def grade_task(template_root: str, submission_dir: str, student_id: str) -> GradedSubmission:
    """The unit of work shipped to a worker; a failure of our own comes back as a row with its traceback."""
    try:
        return _grader_for(template_root).grade(Path(submission_dir), student_id)
    except Exception as error:
        return crashed(student_id, error, WORKER_ID)


def _crashed(student_id: str, error: BaseException) -> GradedSubmission:
    """A task that raised or whose worker died; a worker's traceback rides along as the error's cause."""
    if isinstance(error, concurrent.futures.process.BrokenProcessPool):
        died = RuntimeError("the grading worker process died while grading this submission")
        died.__cause__ = error
        error = died
    return crashed(student_id, error)


class LocalExecutor:
    """`jobs` worker processes on this machine, each grading whole submissions.

    If a worker process dies, the pool cannot tell which submission killed it:
    every submission caught in that pool is graded again, each in a pool of
    its own, so only the culprit ends up with a failed row.
    """

    def __init__(self, jobs: int, task=grade_task):
        self.jobs = jobs
        self.task = task  # a module-level function (template, folder, student) -> GradedSubmission

    def grade_all(self, template_root: Path, tasks: Iterable[Task]) -> Iterator[GradedSubmission]:
        suspects: list[Task] = []
        for task, outcome in self._run(template_root, list(tasks), self.jobs):
            if isinstance(outcome, concurrent.futures.process.BrokenProcessPool):
                suspects.append(task)
            else:
                yield outcome
        for task in suspects:
            for _, outcome in self._run(template_root, [task], 1):
                yield _crashed(task[1], outcome) if isinstance(outcome, BaseException) else outcome

    def _run(self, template_root: Path, tasks: list[Task], jobs: int):
        """(task, GradedSubmission or the exception its worker died with), as they finish."""
        # Forked workers start with what this process has imported (nbgrader above all).
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
            futures = {
                pool.submit(self.task, str(template_root), str(folder), student): (folder, student)
                for folder, student in tasks
            }
            for future in concurrent.futures.as_completed(futures):
                try:
                    yield futures[future], future.result()
                except concurrent.futures.process.BrokenProcessPool as error:
                    yield futures[future], error
                except Exception as error:
                    yield futures[future], _crashed(futures[future][1], error)


class DaskExecutor:
    """A Dask distributed cluster whose workers see the same course directory."""

    def __init__(self, scheduler_address: str):
        from distributed import Client

        self.client = Client(scheduler_address, timeout="30s")

    def grade_all(self, template_root: Path, tasks: Iterable[Task]) -> Iterator[GradedSubmission]:
        from distributed import as_completed

        futures = {
            self.client.submit(
                grade_task, str(template_root), str(folder), student, key=f"grade-{student}", pure=False
            ): student
            for folder, student in tasks
        }
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as error:
                yield _crashed(futures[future], error)

    def close(self) -> None:
        self.client.close()
