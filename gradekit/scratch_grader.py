"""Grade one submission at a time with real nbgrader, in a private course directory.

A grading worker builds one `ScratchGrader` and keeps it: nbgrader and its
configuration are loaded once per worker instead of once per submission.
Whatever nbgrader writes stays in the scratch directory; the results travel
back as plain values (the gradebook record and the graded files).
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import time
from pathlib import Path

from nbgrader.apps import NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import parse_utc
from traitlets.config.loader import PyFileConfigLoader

from gradekit.course import CONFIG_FILE, Course, load_course
from gradekit.gradebook_records import SubmissionRecord, read_record


WORKER_ID = f"{socket.gethostname()}:{os.getpid()}"


@dataclasses.dataclass(frozen=True)
class GradedSubmission:
    """One submission's outcome; a failure is a status on its row, never an exception."""

    student_id: str
    status: str  # "graded" or "failed"
    message: str
    record: SubmissionRecord | None
    files: tuple[tuple[str, bytes], ...]
    seconds: float
    worker: str = ""  # host:pid of the process that graded it

    @property
    def ok(self) -> bool:
        return self.status == "graded"


def nbgrader_api(course: Course, warm_kernels: bool) -> NbGraderAPI:
    """An in-process nbgrader pointed at `course`, configured by the course's nbgrader_config.py.

    With `warm_kernels`, notebooks run in kernels forked from a process that
    has already imported torch; every other step is nbgrader's own.
    """
    config = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
    config.CourseDirectory.root = str(course.root)
    config.CourseDirectory.db_url = course.db_url
    if warm_kernels:
        from nbgrader.preprocessors import Execute

        from gradekit.warm_kernels import WarmExecute

        steps = Autograde.class_traits()["autograde_preprocessors"].default()
        config.Autograde.autograde_preprocessors = [WarmExecute if step is Execute else step for step in steps]
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


class ScratchGrader:
    def __init__(self, template_root: Path, scratch_root: Path, warm_kernels: bool = True):
        self.course = load_course().at(scratch_root)
        if scratch_root.exists():
            shutil.rmtree(scratch_root)
        shutil.copytree(Path(template_root) / "source", scratch_root / "source")
        shutil.copyfile(Path(template_root) / "gradebook.db", scratch_root / "gradebook.db")
        self.api = nbgrader_api(self.course, warm_kernels)
        # Kernels inherit this; forked kernels are held to it (see kernel_zygote.py).
        os.environ["KIT_KERNEL_MEMORY_BYTES"] = str(int(self.course.kernel_memory_gb * 2**30))

    def grade(self, submission_dir: Path, student_id: str) -> GradedSubmission:
        started = time.monotonic()
        target = self.course.submitted_dir / student_id / self.course.assignment_id
        graded_dir = self.course.autograded_dir / student_id / self.course.assignment_id
        try:
            problem = timestamp_problem(Path(submission_dir))
            if problem:
                return self._failed(student_id, problem, started)
            shutil.copytree(submission_dir, target, dirs_exist_ok=False)
            outcome = self._autograde(student_id)
            if not outcome["success"]:
                return self._failed(student_id, _last_lines(outcome.get("error") or outcome.get("log", "")), started)
            return GradedSubmission(
                student_id, "graded", "", read_record(self.course, student_id), _files(graded_dir),
                time.monotonic() - started, WORKER_ID,
            )
        except Exception as error:  # a broken submission must not take the worker down
            return self._failed(student_id, f"{type(error).__name__}: {error}", started)
        finally:
            shutil.rmtree(self.course.submitted_dir / student_id, ignore_errors=True)
            shutil.rmtree(self.course.autograded_dir / student_id, ignore_errors=True)

    def _autograde(self, student_id: str) -> dict:
        """nbgrader's autograde, tried a second time when nbgrader itself fails (a kernel that did not start)."""
        outcome = self.api.autograde(self.course.assignment_id, student_id, force=True, create=True)
        if not outcome["success"]:
            outcome = self.api.autograde(self.course.assignment_id, student_id, force=True, create=True)
        return outcome

    def _failed(self, student_id: str, message: str, started: float) -> GradedSubmission:
        return GradedSubmission(student_id, "failed", message, None, (), time.monotonic() - started, WORKER_ID)


def timestamp_problem(submission_dir: Path) -> str | None:
    """Why the submission's timestamp.txt cannot be read, if it cannot (nbgrader itself would crash on it)."""
    stamp = submission_dir / "timestamp.txt"
    if not stamp.exists():
        return None
    text = stamp.read_text(errors="replace").strip()
    try:
        parse_utc(text)
    except Exception:
        return f"timestamp.txt does not hold a date nbgrader can read: {text[:60]!r}"
    return None


def _files(folder: Path) -> tuple[tuple[str, bytes], ...]:
    return tuple(
        (str(path.relative_to(folder)), path.read_bytes())
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    )


def _last_lines(text: str, count: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-count:]) or "nbgrader reported a failure without a message"
