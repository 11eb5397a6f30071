import dataclasses
import logging

import pytest
from lms_fixtures import build_gradebook, write_canvas_roster

from gradekit.core.course import CONFIG_FILE, load_course
from gradekit.lms import export_step


def course_config(folder, *lines):
    """A configuration file that takes the course's own and adds `lines`."""
    config = folder / "nbgrader_config.py"
    config.write_text(
        "\n".join(["c = get_config()", f"load_subconfig({CONFIG_FILE.name!r}, {str(CONFIG_FILE.parent)!r})", *lines])
    )
    return config


@pytest.mark.unit
def test_the_lms_export_is_off_without_a_roster_in_the_configuration(tmp_path):
    course = load_course(course_config(tmp_path)).at(tmp_path)
    assert course.lms_roster is None
    assert export_step.export_for_lms(course) is None
    assert not export_step.lms_import_file(course).exists()


@pytest.mark.unit
def test_a_configured_roster_turns_the_export_on(tmp_path):
    course = load_course(course_config(tmp_path, "c.LmsExportPlugin.roster = '/course/roster.csv'"))
    assert str(course.lms_roster) == "/course/roster.csv"


@pytest.mark.nbgrader
def test_the_grade_step_writes_the_import_file_and_names_students_the_roster_lacks(tmp_path, caplog):
    course = load_course().at(tmp_path)
    build_gradebook(course.db_url)
    roster = write_canvas_roster(tmp_path / "roster.csv", ("ann", "eve", "dan"))
    with caplog.at_level(logging.WARNING, logger="gradekit"):
        target = export_step.export_for_lms(dataclasses.replace(course, lms_roster=roster))
    assert target == tmp_path / "lms-grades.csv" and target.read_text().startswith("Student,ID,SIS User ID")
    assert "not in the LMS roster, so not in lms-grades.csv: bob" in caplog.text


@pytest.mark.nbgrader
def test_a_bad_roster_is_reported_and_the_grade_command_goes_on(tmp_path, caplog):
    course = load_course().at(tmp_path)
    build_gradebook(course.db_url)
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,Email address\nann,a@x\n")  # a Moodle roster, but Canvas is the default
    with caplog.at_level(logging.WARNING, logger="gradekit"):
        assert export_step.export_for_lms(dataclasses.replace(course, lms_roster=roster)) is None
    assert "LMS import file not written" in caplog.text and "lacks the column(s) Student" in caplog.text
    assert not (tmp_path / "lms-grades.csv").exists()
