"""The course as nbgrader_config.py describes it: the file is read here, once, and nowhere else.

Every later stage takes what it needs from the `Course` it is handed: the typed
settings of nbgrader and of the kit, and the loaded configuration for the stages
that run nbgrader in process.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from gradekit.core.settings import CourseKit, Precheck, PrecheckSettings, due_dates_of

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_FILE = REPO_ROOT / "nbgrader_config.py"

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Course:
    """Where one course directory lives and how nbgrader is told about it."""

    root: Path
    course_id: str
    db_url: str
    exchange_root: Path
    cell_timeout: int
    code_stub: str
    # c.CourseKit.*: each field is named after its trait, which holds its default and help (core/settings.py).
    assignment_id: str
    kernel_memory_gb: float
    grader_attempts: int
    retry_backoff_seconds: float
    idle_seconds: float
    allow_unconfined: bool
    # Every assignment's due date as written (ISO 8601, zoned); `due_date` is this assignment's, as a date.
    due_dates: dict[str, str] = dataclasses.field(compare=False)
    lms_roster: Path | None = None  # LmsExportPlugin.roster; without one there is no LMS export
    precheck: PrecheckSettings = PrecheckSettings()  # the hub's sealed pre-check: c.Precheck.* in nbgrader_config.py
    due_date: datetime.datetime | None = None  # the assignment's one due date (CourseKit.due_dates), zoned
    # The whole configuration as loaded, for nbgrader run in process. Its preprocessors are classes
    # the file loads by path, so it does not pickle: workers get the run's settings as a file instead.
    nbgrader_config: Config = dataclasses.field(default_factory=Config, repr=False, compare=False)

    @property
    def source_dir(self) -> Path:
        return self.root / "source" / self.assignment_id

    @property
    def extensions_file(self) -> Path:
        """Per-student extensions of the due date, written by `gradekit extend`."""
        return self.root / "extensions.json"

    @property
    def release_dir(self) -> Path:
        return self.root / "release" / self.assignment_id

    @property
    def submitted_dir(self) -> Path:
        return self.root / "submitted"

    @property
    def autograded_dir(self) -> Path:
        return self.root / "autograded"

    @property
    def feedback_dir(self) -> Path:
        return self.root / "feedback"

    def at(self, root: Path) -> "Course":
        """The same course in another directory, with its own SQLite gradebook."""
        root = Path(root).resolve()
        return dataclasses.replace(self, root=root, db_url=sqlite_url(root))


def sqlite_url(root: Path) -> str:
    return f"sqlite:///{Path(root) / 'gradebook.db'}"


def load_course(config_file: Path = CONFIG_FILE) -> Course:
    """Read nbgrader's own configuration file, once, and keep the typed settings later stages need."""
    config_file = Path(config_file).resolve()
    config = PyFileConfigLoader(config_file.name, path=str(config_file.parent)).load_config()
    if "due_dates" in config.Precheck:
        raise ValueError(f"{config_file}: c.Precheck.due_dates is now c.CourseKit.due_dates, the course's one due date")
    kit = CourseKit(config=config)
    log.debug("course settings read from %s", config_file)
    directory = config.CourseDirectory
    root = Path(directory.root)
    return Course(
        root=root,
        course_id=directory.course_id,
        db_url=directory.db_url if "db_url" in directory else sqlite_url(root),
        exchange_root=Path(config.Exchange.root),
        cell_timeout=int(config.Execute.timeout),
        code_stub=config.ClearSolutions.code_stub["python"],
        lms_roster=_roster(config),
        **kit_settings(kit),  # type: ignore[arg-type]  # each checked by its trait
        precheck=PrecheckSettings.from_traits(Precheck(config=config), kit),
        due_date=dict(due_dates_of(kit)).get(kit.assignment_id),
        nbgrader_config=config,
    )


def kit_settings(source: Course | CourseKit) -> dict[str, object]:
    """Every `c.CourseKit.*` setting of `source` (a course or the traits themselves), by its trait's name."""
    return {name: getattr(source, name) for name in sorted(CourseKit.class_own_traits(config=True))}


def _roster(config: Config) -> Path | None:
    roster = config.LmsExportPlugin.roster if "roster" in config.LmsExportPlugin else ""
    return Path(roster) if roster else None
