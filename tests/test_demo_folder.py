"""The demo's folder made a complete course: its configuration, exchange and kit link, a stated due date, a roster."""

import csv
import datetime
import stat
from pathlib import Path

import pytest

import gradekit
from gradekit.commands.demo_folder import CANVAS_COLUMNS, ROSTER, complete_course_folder, state_due_date, write_roster
from gradekit.core.course import load_course, sqlite_url

pytestmark = pytest.mark.unit

DUE = datetime.datetime(2026, 3, 2, 23, 59, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))


def test_the_folders_configuration_reads_as_the_kits_course_kept_in_that_folder(tmp_path):
    kit = load_course()
    folder = complete_course_folder(kit.at(tmp_path))
    read = load_course(tmp_path / "nbgrader_config.py")
    assert read.root == tmp_path.resolve() and read.db_url == sqlite_url(tmp_path.resolve())
    assert read.exchange_root == folder.exchange_root == tmp_path.resolve() / "exchange"
    assert read.lms_roster == folder.lms_roster == tmp_path.resolve() / ROSTER
    assert (read.course_id, read.assignment_id, read.cell_timeout) == (
        kit.course_id,
        kit.assignment_id,
        kit.cell_timeout,
    )
    assert (tmp_path / "gradekit").resolve() == Path(gradekit.__file__).resolve().parent
    feedback = folder.exchange_root / kit.course_id / "feedback"
    assert stat.S_IMODE(feedback.stat().st_mode) == 0o711  # the hub's modes (test_exchange.py)
    complete_course_folder(kit.at(tmp_path))  # a second run keeps the link and the exchange


def test_the_due_date_is_stated_in_the_folders_configuration(tmp_path):
    folder = state_due_date(complete_course_folder(load_course().at(tmp_path)), DUE)
    assert folder.due_date == DUE
    assert load_course(tmp_path / "nbgrader_config.py").due_date == DUE


def test_the_roster_lists_everyone_who_handed_in_with_an_lms_id_each(tmp_path):
    course = load_course().at(tmp_path)
    for student in ("bob", "ann"):
        (course.submitted_dir / student).mkdir(parents=True)
    (course.submitted_dir / "stray-file").touch()
    with open(write_roster(course), newline="") as table:
        rows = list(csv.reader(table))
    assert rows[0] == list(CANVAS_COLUMNS)
    assert [(row[0], row[2], row[3]) for row in rows[1:]] == [("ann", "1001", "S0001"), ("bob", "1002", "S0002")]
