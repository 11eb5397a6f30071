"""A due date in a student's words, as the release header, Validate and the pre-check say it."""

import datetime

import pytest

from gradekit.core.due_words import due_line, relative, when

pytestmark = pytest.mark.unit

UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 12, 18, 23, 0, tzinfo=UTC)


def test_the_line_names_the_day_the_time_in_utc_and_how_long_is_left():
    assert (
        due_line(DUE, DUE - datetime.timedelta(days=2, hours=5)) == "due Friday 18 December 2026, 23:00 UTC, in 2 days"
    )
    assert when(datetime.datetime(2026, 12, 19, 0, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))) == (
        "Friday 18 December 2026, 23:30 UTC"
    )


@pytest.mark.parametrize(
    "left, said",
    [
        (datetime.timedelta(days=1, hours=23), "in 1 day"),
        (datetime.timedelta(hours=5, minutes=59), "in 5 h"),
        (datetime.timedelta(minutes=12, seconds=40), "in 12 min"),
        (datetime.timedelta(seconds=20), "in 1 min"),
        (-datetime.timedelta(hours=3, minutes=1), "3 h ago"),
        (-datetime.timedelta(days=4), "4 days ago"),
    ],
)
def test_how_long_is_the_largest_whole_unit(left, said):
    assert relative(left) == said
