import pytest

from gradekit.lms.moodle import moodle_header, moodle_rows
from gradekit.lms.roster import RosterEntry
from gradekit.lms.scores import GradeItem, ScoreTable

pytestmark = pytest.mark.unit

TOTAL = GradeItem("autograd", max_score=5)
CELL = GradeItem("autograd", "010_history", "test_a", 2)


def test_header_is_the_email_identifier_then_one_column_per_grade_item():
    assert moodle_header((TOTAL, CELL)) == ["Email address", "autograd", "autograd: 010_history/test_a"]


def test_rows_follow_the_roster_and_format_scores_plainly():
    roster = (RosterEntry("ann", {"Email address": "ann@uni.example"}), RosterEntry("zed", {"Email address": "z@x"}))
    rows = moodle_rows(roster, ScoreTable((TOTAL, CELL), {"ann": (4.5, 2.0)}))
    assert rows[1:] == [["ann@uni.example", "4.5", "2"], ["z@x", "", ""]]
