import pytest

from gradekit.lms.canvas import canvas_header, canvas_rows
from gradekit.lms.roster import RosterEntry
from gradekit.lms.scores import GradeItem, ScoreTable

pytestmark = pytest.mark.unit

TOTAL = GradeItem("autograd", max_score=5)
CELL = GradeItem("autograd", "010_history", "test_a", 2)


def test_header_is_canvas_identity_columns_then_assignment_with_its_canvas_id():
    assert canvas_header((TOTAL,), {"autograd": "4711"}) == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "autograd (4711)",
    ]


def test_per_cell_columns_carry_no_id_so_canvas_creates_them():
    header = canvas_header((TOTAL, CELL), {"autograd": "4711"})
    assert header[-2:] == ["autograd (4711)", "autograd: 010_history/test_a"]


def test_a_roster_student_unknown_to_the_gradebook_gets_blank_cells():
    entry = RosterEntry("zed", {"Student": "Zed", "ID": "9", "SIS User ID": "", "SIS Login ID": "z", "Section": "A"})
    rows = canvas_rows((entry,), ScoreTable((TOTAL,), {}), {})
    assert rows[1] == ["Zed", "9", "", "z", "A", ""]
