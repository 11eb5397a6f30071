"""Run the real nbgrader command line against a course directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gradekit.core.course import REPO_ROOT, Course


class NbgraderError(RuntimeError):
    """An nbgrader command exited non-zero; the message carries the tail of its log."""


def grading_environment() -> dict[str, str]:
    """The environment nbgrader and its kernels run in.

    The interpreter's bin/ goes first on PATH because nbgrader calls `alembic`
    by name. PYTHONPATH is dropped so that nothing of this repository (the
    reference solutions above all) is importable from a grading kernel.
    """
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PATH"] = with_tools_first(env.get("PATH", ""))
    return env


def with_tools_first(path: str) -> str:
    """`path` with this interpreter's bin/ (alembic, jupyter, nbgrader) in front, unless already there."""
    bin_dir = str(Path(sys.executable).parent)
    return path if path.split(os.pathsep)[:1] == [bin_dir] else bin_dir + os.pathsep + path


def nbgrader_command(course: Course, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "nbgrader",
        *args,
        f"--CourseDirectory.root={course.root}",
        f"--CourseDirectory.db_url={course.db_url}",
    ]


def run_nbgrader(course: Course, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run one nbgrader subcommand; the repository's nbgrader_config.py is loaded from the working directory."""
    result = subprocess.run(
        nbgrader_command(course, *args),
        cwd=REPO_ROOT,
        env=grading_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        log = result.stdout + result.stderr
        tail = "\n".join(log.strip().splitlines()[-25:])
        raise NbgraderError(f"nbgrader {args[0]} failed (exit {result.returncode}):\n{tail}")
    return result
