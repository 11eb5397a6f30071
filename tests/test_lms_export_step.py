import pytest
from lms_fixtures import build_gradebook, write_canvas_roster

from gradekit.core.course import load_course
from gradekit.lms import export_step
from gradekit.lms.export_step import configured_roster


@pytest.mark.unit
def test_the_lms_export_is_off_without_a_roster_in_the_configuration(tmp_path):
    config = tmp_path / "nbgrader_config.py"
    config.write_text("c = get_config()\nc.CourseDirectory.course_id = 'x'\n")
    assert configured_roster(config) is None


@pytest.mark.unit
def test_a_configured_roster_turns_the_export_on(tmp_path):
    config = tmp_path / "nbgrader_config.py"
    config.write_text("c = get_config()\nc.LmsExportPlugin.roster = '/course/roster.csv'\n")
    assert str(configured_roster(config)) == "/course/roster.csv"


@pytest.mark.nbgrader
def test_the_grade_step_writes_the_import_file_and_names_students_the_roster_lacks(tmp_path, monkeypatch, capsys):
    course = load_course().at(tmp_path)
    build_gradebook(course.db_url)
    roster = write_canvas_roster(tmp_path / "roster.csv", ("ann", "eve", "dan"))
    monkeypatch.setattr(export_step, "configured_roster", lambda: roster)
    target = export_step.export_for_lms(course)
    assert target == tmp_path / "lms-grades.csv" and target.read_text().startswith("Student,ID,SIS User ID")
    assert "not in the LMS roster, so not in lms-grades.csv: bob" in capsys.readouterr().out


@pytest.mark.nbgrader
def test_a_bad_roster_is_reported_and_the_grade_command_goes_on(tmp_path, monkeypatch, capsys):
    course = load_course().at(tmp_path)
    build_gradebook(course.db_url)
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,Email address\nann,a@x\n")  # a Moodle roster, but Canvas is the default
    monkeypatch.setattr(export_step, "configured_roster", lambda: roster)
    assert export_step.export_for_lms(course) is None
    printed = capsys.readouterr().out
    assert "LMS import file not written" in printed and "lacks the column(s) Student" in printed
    assert not (tmp_path / "lms-grades.csv").exists()
