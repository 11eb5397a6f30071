"""The grade command's LMS step: when nbgrader_config.py names a roster, write the LMS import file."""

from __future__ import annotations

import csv
import logging
from pathlib import Path

from gradekit.core.course import Course
from gradekit.core.nbgrader_cli import NbgraderError
from gradekit.core.nbgrader_in_process import export

EXPORTER = "gradekit.lms.export_plugin.LmsExportPlugin"

log = logging.getLogger(__name__)


def lms_import_file(course: Course) -> Path:
    return course.root / "lms-grades.csv"


def export_for_lms(course: Course) -> Path | None:
    """Runs nbgrader's export with the LMS plugin and warns of the students the roster lacks; None when off or refused."""
    roster = course.lms_roster
    if roster is None:
        log.debug("no LMS roster configured (LmsExportPlugin.roster): no LMS import file")
        return None
    target = lms_import_file(course)
    try:
        export(course, target, EXPORTER, {"roster": str(roster)})
    except NbgraderError as error:  # a bad roster must not cost the TA the class report that follows
        log.error("LMS import file not written: %s", error)
        return None
    log.info("LMS import file written: %s", target)
    unmatched = target.with_name(f"{target.stem}.not-in-roster.csv")
    if unmatched.exists():
        with unmatched.open(newline="") as handle:
            students = [row["student_id"] for row in csv.DictReader(handle)]
        log.warning(
            "not in the LMS roster, so not in %s: %s (scores in %s)", target.name, ", ".join(students), unmatched
        )
    return target
