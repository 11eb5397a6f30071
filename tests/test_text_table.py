import pytest

from gradekit.core.text_table import COLUMN_CAP, text_table

pytestmark = pytest.mark.unit


def test_columns_are_padded_to_their_widest_cell_under_a_rule():
    table = text_table(["student", "score"], [["ada", "8/8"], ["bartholomew", "0/8"]])
    assert table.splitlines() == [
        "student      score",
        "-----------  -----",
        "ada          8/8",
        "bartholomew  0/8",
    ]


def test_a_table_without_rows_is_its_header_and_rule():
    assert text_table(["a", "bb"], []).splitlines() == ["a  bb", "-  --"]


def diagnoses(length: int) -> str:
    """A list of misconception ids joined as the student table joins them, `length` characters long."""
    names = "; ".join(f"misconception-number-{n} (a title of its own)" for n in range(20))
    return names[:length].rstrip()


def test_a_481_character_cell_wraps_within_the_cap_and_keeps_every_word():
    cell = diagnoses(481)
    assert len(cell) == 481
    lines = text_table(["student", "misconceptions diagnosed"], [["ada", cell], ["bo", "-"]]).splitlines()
    assert max(len(line) for line in lines) <= len("student") + 2 + COLUMN_CAP
    ada = lines[2 : lines.index("bo       -")]
    assert ada[0].startswith("ada      ") and all(line.startswith(" " * 9) for line in ada[1:])
    assert " ".join(line[9:] for line in ada) == cell


def test_a_cell_without_spaces_is_cut_at_the_cap_and_whole_when_joined():
    cell = "x" * 481
    lines = text_table(["id"], [[cell]]).splitlines()
    assert lines[1] == "-" * COLUMN_CAP
    assert all(len(line) <= COLUMN_CAP for line in lines) and "".join(lines[2:]) == cell


def test_a_short_cell_beside_a_wrapped_one_leaves_its_column_blank_below():
    lines = text_table(["a", "b", "c"], [["1", "word " * 20, "z"]], cap=30).splitlines()
    assert lines[2].startswith("1  word") and lines[2].endswith("z")
    assert all(line.startswith("   word") and not line.endswith("z") for line in lines[3:])
