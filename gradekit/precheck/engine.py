"""The sealed engine behind the pre-check: warm grading processes of the TA's own grader, kept for the service's life.

Each process keeps one `ScratchGrader` (nbgrader loaded once, a warm zygote
with torch imported), exactly as a worker of `python -m gradekit grade` does,
so a pre-check gives the grade the TA's run would give. The grading template
(the assignment's source and a gradebook that knows its cells) is generated
once, at start, in the service's own folder. Processes start without the
service's hub credentials in their environment, and every uploaded notebook
is written to a private folder that is removed once it is graded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures.process
import logging
import multiprocessing
import os
import secrets
import shutil
import tempfile
from pathlib import Path

import nbformat

from gradekit.authoring.release import new_workspace
from gradekit.core.course import Course
from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading.executors import grade_task
from gradekit.grading.submission_grader import GradedSubmission, grader_error, write_settings
from gradekit.grading.warm_kernels import kernels_prefix, name_kernel_folders_after

log = logging.getLogger(__name__)

# The service's own credentials for the hub: no grading process (nor kernel) may hold them.
HUB_VARIABLES = ("JUPYTERHUB_", "JPY_")


def without_hub_credentials(environment: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in environment.items() if not name.startswith(HUB_VARIABLES)}


def _start_grading_process(run_root: str) -> None:
    """A grading process's start: no hub token, temporary files (kernel folders too) under the run's folder."""
    kept = without_hub_credentials(dict(os.environ))
    os.environ.clear()
    os.environ.update(kept)
    tempfile.tempdir = run_root
    name_kernel_folders_after(Path(run_root).name)


class SealedEngine:
    def __init__(self, course: Course, state_dir: Path, workers: int):
        self.course = course
        self.workers = workers
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.state_dir, 0o700)  # hidden tests and uploaded answers live below it
        template = self.state_dir / "template"
        if template.exists():
            shutil.rmtree(template)
        notebooks = tuple(sorted(path.stem for path in course.source_dir.glob("*.ipynb")))
        self.template = new_workspace(course, template, notebooks)
        write_settings(self.template.root, course)
        self.incoming = self.state_dir / "incoming"
        shutil.rmtree(self.incoming, ignore_errors=True)
        self.incoming.mkdir(mode=0o700)
        self._run_root = Path(tempfile.mkdtemp(prefix="gradekit-precheck-", dir=self.state_dir))
        self._pool = self._new_pool()

    def source_notebooks(self) -> dict:
        """Notebook name -> its trusted source (with the hidden tests), as the grading template holds it."""
        return {
            path.stem: nbformat.read(path, as_version=4) for path in sorted(self.template.source_dir.glob("*.ipynb"))
        }

    def _new_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_start_grading_process,
            initargs=(str(self._run_root),),
        )

    async def grade(self, student: str, notebook: str, content: bytes) -> GradedSubmission:
        """Grade one uploaded notebook of `student` in a grading process; a lost process is the grader's failure."""
        folder = self.incoming / secrets.token_hex(8) / self.course.assignment_id
        folder.mkdir(parents=True, mode=0o700)
        (folder / f"{notebook}.ipynb").write_bytes(content)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, grade_task, str(self.template.root), str(folder), student)
        except concurrent.futures.process.BrokenProcessPool:
            log.warning("a grading process died while grading %s's %s; starting fresh ones", student, notebook)
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            lost = GraderFailure(GraderCause.WORKER_LOST, "the grading process died while grading this notebook")
            return grader_error(student, lost, 1)
        finally:
            shutil.rmtree(folder.parent, ignore_errors=True)

    async def warm(self) -> None:
        """Grade a blank notebook once in every grading process, so the first student's check finds them warm."""
        release = sorted(self.template.release_dir.glob("*.ipynb"))[0]
        content = release.read_bytes()
        await asyncio.gather(*(self.grade(f"warm-up-{n}", release.stem, content) for n in range(self.workers)))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._run_root, ignore_errors=True)
        for base in {tempfile.gettempdir(), "/tmp"}:
            for folder in Path(base).glob(f"{kernels_prefix(self._run_root.name)}*"):
                shutil.rmtree(folder, ignore_errors=True)
