"""What makes the demo's folder a complete course a TA can work in, as the TA page says.

Beside the source and release the demo builds, the folder gets its own
`nbgrader_config.py` (the kit's settings, then this folder's gradebook, exchange
and LMS roster, so nbgrader and formgrader run there never reach the real course),
the exchange with the modes the hub uses (release_feedback writes to it), a link to
the kit's package (so `python -m nbgrader export --exporter=gradekit...`, run in the
folder, finds the LMS plugin as it does in a clone of the kit) and, once the class
has handed in, a Canvas roster of the class (the LMS export needs one).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
from pathlib import Path

from gradekit.core.course import CONFIG_FILE, Course
from gradekit.grading.exchange import ensure_exchange

ROSTER = "lms-roster.csv"
CANVAS_COLUMNS = ("student_id", "Student", "ID", "SIS User ID", "SIS Login ID", "Section")

CONFIG = '''"""The demo course's configuration (written by `python -m gradekit demo`; the folder is wiped on each run).

The kit's own settings first, then this folder as the course: its own gradebook,
exchange and LMS roster, so nothing run here touches the real course.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))

c = get_config()  # noqa: F821
load_subconfig({name!r}, {folder!r})  # noqa: F821  (the kit's nbgrader_config.py)
c.CourseDirectory.root = HERE
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(HERE, "gradebook.db")
c.Exchange.root = os.path.join(HERE, "exchange")
c.LmsExportPlugin.roster = os.path.join(HERE, {roster!r})
'''


def complete_course_folder(course: Course, kit_config: Path = CONFIG_FILE) -> Course:
    """Give the course at `course.root` its configuration, exchange and kit link; the course as that configuration says."""
    root = course.root
    (root / "nbgrader_config.py").write_text(
        CONFIG.format(name=kit_config.name, folder=str(kit_config.parent), roster=ROSTER)
    )
    link = root / "gradekit"
    if not link.exists():
        link.symlink_to(kit_config.parent / "gradekit", target_is_directory=True)
    exchange = root / "exchange"
    ensure_exchange(exchange, course.course_id)
    return dataclasses.replace(course, exchange_root=exchange, lms_roster=root / ROSTER)


def state_due_date(course: Course, due: datetime.datetime) -> Course:
    """The folder's configuration states the assignment's due date (zoned), as a real course's does."""
    stated = {**course.due_dates, course.assignment_id: due.isoformat()}
    with (course.root / "nbgrader_config.py").open("a") as config:
        config.write(f"c.CourseKit.due_dates = {stated!r}\n")
    return dataclasses.replace(course, due_dates=stated, due_date=due)


def write_roster(course: Course) -> Path:
    """A Canvas roster of everyone who handed in (made-up LMS ids), so the LMS export has a class to fill."""
    students = sorted(path.name for path in course.submitted_dir.iterdir() if path.is_dir())
    target = course.root / ROSTER
    with target.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(CANVAS_COLUMNS)
        for number, student in enumerate(students, start=1):
            writer.writerow([student, student, 1000 + number, f"S{number:04d}", student, "Demo"])
    return target
