import csv

import pytest
from lms_fixtures import build_gradebook, write_canvas_roster, write_moodle_roster
from nbgrader.api import Gradebook

from gradekit.core.course import load_course
from gradekit.core.nbgrader_cli import run_nbgrader
from gradekit.lms.export_plugin import LmsExportPlugin, unmatched_path
from gradekit.lms.export_step import EXPORTER
from gradekit.lms.roster import RosterError


def export(tmp_path, **traits):
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    build_gradebook(db_url)
    plugin = LmsExportPlugin(to=str(tmp_path / "lms.csv"), **traits)
    with Gradebook(db_url) as gradebook:
        plugin.export(gradebook)
    with open(tmp_path / "lms.csv", newline="") as handle:
        return list(csv.reader(handle))


@pytest.mark.unit
def test_a_gradebook_student_missing_from_the_roster_is_reported_with_scores(tmp_path, caplog):
    roster = write_moodle_roster(tmp_path / "roster.csv", ("ann", "dan", "eve"))
    rows = export(tmp_path, roster=str(roster), lms="moodle")
    assert [row[0] for row in rows[1:]] == ["ann@uni.example", "dan@uni.example", "eve@uni.example"]
    with open(unmatched_path(tmp_path / "lms.csv"), newline="") as handle:
        assert list(csv.reader(handle)) == [["student_id", "autograd"], ["bob", "1.5"]]
    assert "bob" in caplog.text


@pytest.mark.unit
def test_an_enrolled_student_without_a_submission_scores_zero_and_per_cell_columns_follow(tmp_path):
    roster = write_canvas_roster(tmp_path / "roster.csv", ("ann", "bob", "eve", "dan"))
    rows = export(tmp_path, roster=str(roster), per_exercise=True, canvas_assignment_ids={"autograd": "77"})
    assert rows[0][5:] == ["autograd (77)", "autograd: 010_history/test_a", "autograd: 010_history/test_b"]
    assert [row[5:] for row in rows[1:]] == [["5", "2", "3"], ["1.5", "1", "0.5"], ["1", "0", "1"], ["0", "0", "0"]]
    assert not unmatched_path(tmp_path / "lms.csv").exists()


@pytest.mark.unit
def test_without_a_roster_the_export_refuses_and_writes_nothing(tmp_path):
    with pytest.raises(RosterError, match="no roster configured"):
        export(tmp_path)
    assert not (tmp_path / "lms.csv").exists()


@pytest.mark.nbgrader
def test_the_real_nbgrader_export_writes_the_canvas_file_through_the_plugin(tmp_path):
    course = load_course().at(tmp_path)
    build_gradebook(course.db_url)
    roster = write_canvas_roster(tmp_path / "roster.csv", ("ann", "eve", "dan"))
    target = tmp_path / "canvas.csv"
    result = run_nbgrader(
        course,
        "export",
        f"--exporter={EXPORTER}",
        f"--to={target}",
        f"--LmsExportPlugin.roster={roster}",
        "--LmsExportPlugin.canvas_assignment_ids=autograd=4711",
    )
    with open(target, newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "autograd (4711)"],
        ["Ann, Test", "1001", "S1", "ann@uni.example", "Section A", "5"],
        ["Eve, Test", "1002", "S2", "eve@uni.example", "Section A", "1"],
        ["Dan, Test", "1003", "S3", "dan@uni.example", "Section A", "0"],
    ]
    assert "not in the roster" in result.stdout + result.stderr and "bob" in result.stdout + result.stderr
