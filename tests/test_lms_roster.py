import pytest

from gradekit.lms.roster import RosterError, load_roster

pytestmark = pytest.mark.unit


def test_rows_keep_file_order_and_lms_columns(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("student_id,Email address\nbob,b@x\nann,a@x\n")
    roster = load_roster(path, ("Email address",))
    assert [(e.student_id, e.get("Email address")) for e in roster] == [("bob", "b@x"), ("ann", "a@x")]


@pytest.mark.parametrize(
    "text, says",
    [
        ("student_id,Student\nann,Ann\n", "lacks the column(s) Email address"),
        ("student_id,Email address\n,a@x\n", "line 2: the student_id is blank"),
        ("student_id,Email address\nann,a@x\nann,b@x\n", "line 3: student 'ann' appears twice"),
    ],
)
def test_a_bad_roster_is_refused_with_the_place_named(tmp_path, text, says):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    with pytest.raises(RosterError, match=says.replace("(", r"\(").replace(")", r"\)")):
        load_roster(path, ("Email address",))


def test_a_missing_roster_file_is_named(tmp_path):
    with pytest.raises(RosterError, match="does not exist"):
        load_roster(tmp_path / "nope.csv", ())
