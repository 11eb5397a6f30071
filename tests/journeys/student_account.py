"""A simulated student account: its own home folder, nbgrader configuration and cache.

nbgrader 0.9.6 names the submitting student after the operating-system account
(`pwd.getpwuid(os.getuid())`, not $USER), unless `CourseDirectory.student_id`
is configured. Simulated students therefore share one OS account but each has
a home folder with an nbgrader_config.py naming its student id, its own
exchange cache (where `submit` keeps the secret `fetch_feedback` needs) and
its own Jupyter folders. JupyterLab started in that home reads the same file.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from gradekit.core.nbgrader_cli import NbgraderError, grading_environment

CONFIG_TEMPLATE = '''"""nbgrader settings of student {student_id!r} (written by journeys.student_account)."""
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.student_id = {student_id!r}
c.Exchange.root = {exchange_root!r}
c.Exchange.cache = {cache!r}
# Validate's kernels get CurveZMQ keys, as the course's do: encrypted, so ipykernel does not warn.
c.KernelManager.transport_encryption = "auto"
'''


@dataclasses.dataclass(frozen=True)
class StudentAccount:
    """Where one simulated student works: `home` is the working folder of their JupyterLab and commands."""

    student_id: str
    course_id: str
    home: Path
    exchange_root: Path

    @property
    def cache(self) -> Path:
        return self.home / ".nbgrader_cache"

    @property
    def config_file(self) -> Path:
        return self.home / "nbgrader_config.py"

    def assignment_dir(self, assignment_id: str) -> Path:
        """Where `fetch_assignment` puts the assignment, and where feedback lands below it."""
        return self.home / assignment_id

    def feedback_dir(self, assignment_id: str) -> Path:
        return self.assignment_dir(assignment_id) / "feedback"


def create_student_account(homes: Path, student_id: str, course_id: str, exchange_root: Path) -> StudentAccount:
    """Make `homes/<student_id>` with the student's nbgrader_config.py."""
    account = StudentAccount(student_id, course_id, (Path(homes) / student_id).resolve(), Path(exchange_root).resolve())
    account.home.mkdir(parents=True, exist_ok=False)
    account.config_file.write_text(
        CONFIG_TEMPLATE.format(
            student_id=student_id,
            course_id=course_id,
            exchange_root=str(account.exchange_root),
            cache=str(account.cache),
        )
    )
    return account


def student_environment(account: StudentAccount) -> dict[str, str]:
    """The environment of the student's commands and JupyterLab: their home and Jupyter folders."""
    env = grading_environment()
    for name in ("KIT_EXCHANGE_ROOT", "KIT_GRADEBOOK_URL", "JUPYTERHUB_USER"):
        env.pop(name, None)
    jupyter = account.home / ".jupyter"
    env.update(
        HOME=str(account.home),
        USER=account.student_id,
        LOGNAME=account.student_id,
        JUPYTER_CONFIG_DIR=str(jupyter / "config"),
        JUPYTER_DATA_DIR=str(jupyter / "data"),
        JUPYTER_RUNTIME_DIR=str(jupyter / "runtime"),
        IPYTHONDIR=str(account.home / ".ipython"),
    )
    return env


def run_as_student(account: StudentAccount, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run one nbgrader subcommand in the student's home with the student's configuration."""
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=account.home,
        env=student_environment(account),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-25:])
        raise NbgraderError(f"{account.student_id}: nbgrader {args[0]} failed (exit {result.returncode}):\n{tail}")
    return result


def fetch_assignment(account: StudentAccount, assignment_id: str) -> Path:
    """`nbgrader fetch_assignment`: copy the released assignment into the student's home."""
    run_as_student(account, "fetch_assignment", assignment_id)
    return account.assignment_dir(assignment_id)


def submit_assignment(account: StudentAccount, assignment_id: str) -> subprocess.CompletedProcess:
    """`nbgrader submit`: copy the student's assignment folder to the exchange's inbound folder."""
    return run_as_student(account, "submit", assignment_id)


def fetch_feedback(account: StudentAccount, assignment_id: str) -> Path:
    """`nbgrader fetch_feedback`: copy the feedback released for this student's submissions; returns its folder."""
    run_as_student(account, "fetch_feedback", assignment_id)
    return account.feedback_dir(assignment_id)
