"""The course side of nbgrader's filesystem exchange: release, collect, release feedback.

Every step is the real nbgrader command, run against a course directory with
the exchange folder given explicitly, so a scratch course never touches the
exchange that nbgrader_config.py would pick by default.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from gradekit.core.course import CONFIG_FILE, Course
from gradekit.core.nbgrader_cli import grading_environment, run_nbgrader


def exchange_options(course: Course, exchange_root: Path) -> tuple[str, ...]:
    return (f"--course={course.course_id}", f"--Exchange.root={Path(exchange_root).resolve()}")


def release_assignment(course: Course, exchange_root: Path) -> subprocess.CompletedProcess:
    """`nbgrader release_assignment`: copy release/<assignment>/ to the exchange's outbound folder."""
    return run_nbgrader(
        course, "release_assignment", course.assignment_id, "--force", *exchange_options(course, exchange_root)
    )


def collect(course: Course, exchange_root: Path) -> subprocess.CompletedProcess:
    """`nbgrader collect`: copy each student's latest submission from inbound to submitted/."""
    return run_nbgrader(course, "collect", course.assignment_id, "--update", *exchange_options(course, exchange_root))


def release_feedback(course: Course, exchange_root: Path) -> subprocess.CompletedProcess:
    """`nbgrader release_feedback`: publish feedback/<student>/ HTML to the exchange."""
    return run_nbgrader(course, "release_feedback", course.assignment_id, *exchange_options(course, exchange_root))


def install_course_config(course: Course) -> Path:
    """Link the course's nbgrader_config.py into `course.root`, as a TA's server reads it from its root folder.

    The file places the course root next to the link and finds the kit's
    preprocessors beside the file it links to; the exchange and the gradebook
    come from the environment (see `instructor_environment`).
    """
    target = course.root / CONFIG_FILE.name
    target.symlink_to(CONFIG_FILE)
    return target


def instructor_environment(course: Course, exchange_root: Path) -> dict[str, str]:
    """The environment of a TA's tools for `course`: nbgrader's bin/ on PATH, this exchange and gradebook."""
    env = grading_environment()
    env["KIT_EXCHANGE_ROOT"] = str(Path(exchange_root).resolve())
    env["KIT_GRADEBOOK_URL"] = course.db_url
    return env
