"""Row statuses are enum members that still read as plain words in CSV files and printed rows."""

import csv
import io

import pytest

from gradekit.core.status import Status

pytestmark = pytest.mark.unit


def test_each_status_reads_as_its_word():
    assert [str(s) for s in Status] == ["graded", "flagged", "failed"]
    assert f"[{Status.FAILED:<7}]" == "[failed ]"
    assert Status("flagged") is Status.FLAGGED


def test_a_csv_row_holds_the_word():
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["ada", Status.GRADED])
    assert buffer.getvalue().strip() == "ada,graded"
