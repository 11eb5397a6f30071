import pytest

from gradekit.core.text_table import text_table

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
