"""`gradekit extend`: a known student, a zoned date after the due date and a reason, or nothing changes."""

import dataclasses
import datetime
import json
import shutil

import pytest

from gradekit.authoring.release import copy_source
from gradekit.commands.cli import main
from gradekit.commands.extend import extend, known_students
from gradekit.grading.gradebook import open_gradebook

pytestmark = pytest.mark.unit

DUE = datetime.datetime(2026, 12, 18, 23, 0, tzinfo=datetime.timezone.utc)
NOW = datetime.datetime(2026, 12, 10, 9, 0, tzinfo=datetime.timezone.utc)


@pytest.fixture(scope="module")
def _made_once(course, tmp_path_factory):
    """Making a gradebook takes seconds: each test gets a copy of one."""
    tmp_path = tmp_path_factory.mktemp("made")
    moved = dataclasses.replace(copy_source(course, tmp_path / "course", ()), due_date=DUE)
    with open_gradebook(moved) as gradebook:
        gradebook.update_or_create_student("ana")
    (moved.submitted_dir / "ben" / moved.assignment_id).mkdir(parents=True)
    return moved


@pytest.fixture
def scratch(_made_once, tmp_path):
    shutil.copytree(_made_once.root, tmp_path / "course")
    return _made_once.at(tmp_path / "course")


def test_students_are_the_gradebooks_and_those_who_submitted(scratch):
    assert known_students(scratch) == frozenset({"ana", "ben"})


def test_an_extension_is_granted_and_said(scratch, capsys):
    assert extend(scratch, "ben", "2026-12-22T23:00:00+00:00", "ill for a week", NOW) == 0
    assert json.loads(scratch.extensions_file.read_text()) == {
        "ben": {"until": "2026-12-22T23:00:00+00:00", "why": "ill for a week", "granted_at": NOW.isoformat()}
    }
    assert capsys.readouterr().out.startswith("ben: extended until 2026-12-22T23:00:00+00:00 (ill for a week)")


@pytest.mark.parametrize(
    "student, until, said",
    [
        ("zoe", "2026-12-22T23:00:00+00:00", "'zoe' is not a student of the course"),
        ("ben", "2026-12-22T23:00", "has no time zone"),
        ("ben", "2026-12-17T23:00:00+00:00", "is not after the due date"),
    ],
)
def test_bad_input_is_refused_on_stderr_and_changes_nothing(scratch, capsys, student, until, said):
    assert extend(scratch, student, until, "ill", NOW) == 2
    error = capsys.readouterr().err
    assert error.startswith("extend: ") and said in error and error.rstrip().endswith("nothing was changed")
    assert not scratch.extensions_file.exists()


def test_the_command_line_refuses_a_folder_that_is_no_course(tmp_path, capsys):
    code = main(["extend", "ben", "--until", "2026-12-22T23:00:00+00:00", "--why", "ill", "--course", str(tmp_path)])
    assert code == 2
    assert "is not a course folder" in capsys.readouterr().err


def test_typed_in_a_course_folder_of_its_own_it_extends_that_folders_course(scratch, monkeypatch, capsys):
    from gradekit.commands.demo_folder import complete_course_folder, state_due_date
    from gradekit.core.course import REPO_ROOT

    state_due_date(complete_course_folder(scratch), DUE)
    kits_own = (REPO_ROOT / scratch.extensions_file.name).exists()
    monkeypatch.chdir(scratch.root)
    assert main(["extend", "ben", "--until", "2026-12-22T23:00:00+00:00", "--why", "ill for a week"]) == 0
    assert list(json.loads(scratch.extensions_file.read_text())) == ["ben"]
    assert (REPO_ROOT / scratch.extensions_file.name).exists() == kits_own  # the kit's own course is untouched
    assert str(scratch.extensions_file) in capsys.readouterr().out
