"""The course's one due date and its extensions reach the gradebook, where nbgrader measures lateness."""

import datetime
import shutil

import pytest

from gradekit.authoring.release import copy_source
from gradekit.core.extensions import Extension
from gradekit.grading.deadlines import gradebook_date, record_deadlines
from gradekit.grading.gradebook import open_gradebook

pytestmark = pytest.mark.unit

UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 12, 19, 0, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))


@pytest.fixture(scope="module")
def _made_once(course, tmp_path_factory):
    """Making a gradebook takes seconds: each test gets a copy of one."""
    tmp_path = tmp_path_factory.mktemp("made")
    import dataclasses

    scratch = dataclasses.replace(copy_source(course, tmp_path / "course", ()), due_date=DUE)
    with open_gradebook(scratch) as gradebook:
        gradebook.update_or_create_assignment(scratch.assignment_id, duedate=datetime.datetime(2020, 1, 1))
        gradebook.update_or_create_student("ana")
        gradebook.add_submission(scratch.assignment_id, "ana", timestamp=datetime.datetime(2026, 12, 19, 1, 0))
    return scratch


@pytest.fixture
def dated(_made_once, tmp_path):
    shutil.copytree(_made_once.root, tmp_path / "course")
    return _made_once.at(tmp_path / "course")


def test_the_due_date_and_an_extension_are_written_and_lateness_follows_them(dated):
    extensions = {"ben": Extension("ben", DUE + datetime.timedelta(days=2), "ill", DUE)}
    record_deadlines(dated, ["ana", "ben", "cai"], extensions)
    with open_gradebook(dated) as gradebook:
        assert gradebook.find_assignment(dated.assignment_id).duedate == datetime.datetime(2026, 12, 18, 23, 0)
        ana = gradebook.find_submission(dated.assignment_id, "ana")
        ben = gradebook.find_submission(dated.assignment_id, "ben")
        assert (ana.extension, ana.total_seconds_late) == (None, 7200.0)
        assert ben.extension == datetime.timedelta(days=2)
        assert [s.student.id for s in gradebook.find_assignment(dated.assignment_id).submissions] == ["ana", "ben"]


def test_an_extension_taken_back_is_taken_off_the_gradebook(dated):
    record_deadlines(dated, ["ana"], {"ana": Extension("ana", DUE + datetime.timedelta(hours=3), "ill", DUE)})
    with open_gradebook(dated) as gradebook:
        assert gradebook.find_submission(dated.assignment_id, "ana").total_seconds_late == 0
    record_deadlines(dated, ["ana"], {})
    with open_gradebook(dated) as gradebook:
        assert gradebook.find_submission(dated.assignment_id, "ana").extension is None


def test_gradebook_dates_are_utc_without_a_zone():
    assert gradebook_date(DUE) == datetime.datetime(2026, 12, 18, 23, 0)
