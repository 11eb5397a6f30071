"""The TA's pipeline in a course folder: `gradekit grade --course DIR` grades the course kept there, or refuses clearly."""

import pytest

from gradekit.commands.cli import main
from gradekit.commands.ta_pipeline import NotACourseFolder, course_in_folder
from gradekit.core.course import load_course, sqlite_url

pytestmark = pytest.mark.unit


def test_a_course_folder_brings_its_own_folders_and_gradebook(tmp_path, monkeypatch):
    monkeypatch.delenv("KIT_GRADEBOOK_URL", raising=False)
    course = load_course()
    (tmp_path / "source" / course.assignment_id).mkdir(parents=True)
    moved = course_in_folder(course, tmp_path)
    assert moved.root == tmp_path.resolve() and moved.db_url == sqlite_url(tmp_path.resolve())
    assert moved.submitted_dir == tmp_path.resolve() / "submitted"
    monkeypatch.setenv("KIT_GRADEBOOK_URL", "postgresql://grader@127.0.0.1/course")
    assert course_in_folder(course, tmp_path).db_url == "postgresql://grader@127.0.0.1/course"


def test_a_folder_without_a_course_is_refused_before_anything_runs(tmp_path, capsys):
    with pytest.raises(NotACourseFolder, match="is not a course folder"):
        course_in_folder(load_course(), tmp_path)
    assert main(["grade", "--course", str(tmp_path)]) == 2
    assert "is not a course folder: it has no source/" in capsys.readouterr().err
