"""nbgrader's own commands run in this process, pointed at a course and configured as it says.

A command of nbgrader's started as a process of its own spends over a second importing nbgrader
before it does anything, and one that creates a gradebook another second and a half in a process
of `alembic`, which prints the schema's version the gradebook is stamped with. The kit's processes
have nbgrader loaded already, so the steps the kit runs itself (a workspace's release, the
feedback pages, the grades' export) run here, and a new gradebook's version is read from
nbgrader's migration scripts in this process: the answer `alembic heads` gives, which
tests/test_nbgrader_in_process.py holds equal to nbgrader's own.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import nbgrader.api
from alembic.config import Config as AlembicConfig
from alembic.script import ScriptDirectory
from nbgrader.apps import NbGraderAPI
from nbgrader.apps.exportapp import ExportApp
from nbgrader.coursedir import CourseDirectory
from nbgrader.dbutil import ALEMBIC_DIR
from nbgrader.utils import capture_log
from traitlets.config import Config

from gradekit.core.course import Course
from gradekit.core.nbgrader_cli import NbgraderError

# nbgrader's own way to find the version: a process of `alembic heads` (kept to compare with).
ASKED_OF_A_PROCESS = nbgrader.api.get_alembic_version


@functools.cache
def schema_version() -> str:
    """The newest revision of nbgrader's gradebook schema, read from its migration scripts in this process."""
    config = AlembicConfig()
    config.set_main_option("script_location", ALEMBIC_DIR)
    head = ScriptDirectory.from_config(config).get_current_head()
    if head is None:
        raise NbgraderError("nbgrader ships no gradebook migrations: a new gradebook would have no version")
    return head


def read_schema_here() -> None:
    """Every gradebook this process creates from now on is stamped from `schema_version`, not by a process."""
    nbgrader.api.get_alembic_version = schema_version


def course_config(course: Course) -> Config:
    """The course's nbgrader configuration (a copy: the course's own stays as it was loaded), pointed at `course`."""
    config = copy.deepcopy(course.nbgrader_config)
    config.CourseDirectory.root = str(course.root)
    config.CourseDirectory.db_url = course.db_url
    return config


def course_api(course: Course, config: Config | None = None) -> NbGraderAPI:
    """nbgrader's API in this process, configured as `config` says (the course's own when None)."""
    read_schema_here()
    config = course_config(course) if config is None else config
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def generate_assignment(course: Course) -> None:
    """nbgrader's generate_assignment of the course's assignment, forced, as `nbgrader generate_assignment --force`."""
    succeeded(course_api(course).generate_assignment(course.assignment_id, force=True), "generate_assignment")


def export(course: Course, target: Path, plugin: str | None = None, settings: dict[str, object] | None = None) -> None:
    """nbgrader's export of the course's gradebook to `target` with `plugin` (its CSV when None), as `nbgrader export`.

    `settings` are the plugin's own traits, as `--<PluginName>.<trait>=` would set them.
    """
    read_schema_here()
    config = course_config(course)
    config.ExportPlugin.to = str(target)
    if plugin is not None:
        config.ExportApp.plugin_class = plugin
        for name, value in (settings or {}).items():
            setattr(config[plugin.rsplit(".", 1)[-1]], name, value)
    app = ExportApp(coursedir=CourseDirectory(config=config), config=config)
    succeeded(capture_log(app), "export")


def succeeded(outcome: dict, command: str) -> None:
    """Raise NbgraderError naming nbgrader's own error when `outcome` (nbgrader's API's answer) says it failed."""
    if not outcome["success"]:
        raise NbgraderError(f"nbgrader {command} failed: {nbgrader_error(outcome)}")


def nbgrader_error(outcome: dict) -> str:
    """nbgrader's own error lines from a failed run, or the end of its log."""
    log = outcome.get("error") or outcome.get("log", "")
    errors = [line.split("ERROR]", 1)[1].strip() for line in log.splitlines() if "ERROR]" in line]
    errors = [line for line in errors if line and not line.startswith("Traceback")]
    return " / ".join(dict.fromkeys(errors))[:400] if errors else _last_lines(log)


def _last_lines(text: str, count: int = 6) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-count:]) or "nbgrader reported a failure without a message"
