import pytest

from gradekit.lms.export_step import configured_roster

pytestmark = pytest.mark.unit


def test_the_lms_export_is_off_without_a_roster_in_the_configuration(tmp_path):
    config = tmp_path / "nbgrader_config.py"
    config.write_text("c = get_config()\nc.CourseDirectory.course_id = 'x'\n")
    assert configured_roster(config) is None


def test_a_configured_roster_turns_the_export_on(tmp_path):
    config = tmp_path / "nbgrader_config.py"
    config.write_text("c = get_config()\nc.LmsExportPlugin.roster = '/course/roster.csv'\n")
    assert str(configured_roster(config)) == "/course/roster.csv"

