"""The grade command's LMS step: when nbgrader_config.py names a roster, write the LMS import file."""

from __future__ import annotations

import csv
from pathlib import Path

from traitlets.config.loader import PyFileConfigLoader

from gradekit.core.course import CONFIG_FILE, Course
from gradekit.core.nbgrader_cli import NbgraderError, run_nbgrader

EXPORTER = "gradekit.lms.export_plugin.LmsExportPlugin"


def configured_roster(config_file: Path = CONFIG_FILE) -> Path | None:
    """The roster set as LmsExportPlugin.roster, or None: without a roster there is no LMS export."""
    config_file = Path(config_file).resolve()
    config = PyFileConfigLoader(config_file.name, path=str(config_file.parent)).load_config()
    roster = config.LmsExportPlugin.roster if "roster" in config.LmsExportPlugin else ""
    return Path(roster) if roster else None


def lms_import_file(course: Course) -> Path:
    return course.root / "lms-grades.csv"


def export_for_lms(course: Course) -> Path | None:
    """Runs nbgrader's export with the LMS plugin and prints the students the roster lacks; None when off or refused."""
    roster = configured_roster()
    if roster is None:
        return None
    target = lms_import_file(course)
    try:
        run_nbgrader(course, "export", f"--exporter={EXPORTER}", f"--to={target}", f"--LmsExportPlugin.roster={roster}")
    except NbgraderError as error:  # a bad roster must not cost the TA the class report that follows
        print(f"LMS import file not written: {error}")
        return None
    unmatched = target.with_name(f"{target.stem}.not-in-roster.csv")
    if unmatched.exists():
        with unmatched.open(newline="") as handle:
            students = [row["student_id"] for row in csv.DictReader(handle)]
        print(f"not in the LMS roster, so not in {target.name}: {', '.join(students)} (scores in {unmatched})")
    return target
