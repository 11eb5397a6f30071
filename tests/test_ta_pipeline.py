"""The TA's pipeline: `gradekit grade --course DIR` grades the course kept there, or refuses clearly; its feedback pages."""

import pytest

from gradekit.commands.cli import main
from gradekit.commands.ta_pipeline import NotACourseFolder, course_in_folder, feedback_in_process
from gradekit.core.course import load_course, sqlite_url
from gradekit.core.nbgrader_cli import run_nbgrader


@pytest.mark.unit
def test_a_course_folder_brings_its_own_folders_and_gradebook(tmp_path, monkeypatch):
    monkeypatch.delenv("KIT_GRADEBOOK_URL", raising=False)
    course = load_course()
    (tmp_path / "source" / course.assignment_id).mkdir(parents=True)
    moved = course_in_folder(course, tmp_path)
    assert moved.root == tmp_path.resolve() and moved.db_url == sqlite_url(tmp_path.resolve())
    assert moved.submitted_dir == tmp_path.resolve() / "submitted"
    monkeypatch.setenv("KIT_GRADEBOOK_URL", "postgresql://grader@127.0.0.1/course")
    assert course_in_folder(course, tmp_path).db_url == "postgresql://grader@127.0.0.1/course"


@pytest.mark.unit
def test_a_folder_without_a_course_is_refused_before_anything_runs(tmp_path, capsys):
    with pytest.raises(NotACourseFolder, match="is not a course folder"):
        course_in_folder(load_course(), tmp_path)
    assert main(["grade", "--course", str(tmp_path)]) == 2
    assert "is not a course folder: it has no source/" in capsys.readouterr().err


@pytest.mark.nbgrader
def test_feedback_made_in_process_is_the_page_nbgrader_s_command_makes(course, manifest, tmp_path, monkeypatch):
    """The class split between two runs of nbgrader's command (one student each), then drawn in this process."""
    from cohort_fixtures import cohort_course

    from gradekit.commands import ta_pipeline
    from gradekit.grading.cohort import grade_cohort
    from gradekit.grading.executors import LocalExecutor

    notebook = "010_history"
    scratch = cohort_course(course, manifest.only([notebook]), tmp_path / "course", controls=0)
    grade_cohort(scratch, LocalExecutor(1), (notebook,))
    monkeypatch.setattr(ta_pipeline, "FEEDBACK_STUDENTS_PER_RUN", 1)
    commands = []
    monkeypatch.setattr(ta_pipeline, "run_nbgrader", lambda *args: commands.append(args) or run_nbgrader(*args))
    ta_pipeline.generate_feedback(scratch, processes=2)
    assert [args[1] for args in commands] == ["generate_feedback", "generate_feedback"]
    by_command = scratch.feedback_dir.rename(tmp_path / "by-command")
    feedback_in_process(scratch)
    pages = sorted(path.relative_to(by_command) for path in by_command.rglob("*.html"))
    assert len(pages) == 2  # the reference's and the blank stubs'
    assert sorted(path.relative_to(scratch.feedback_dir) for path in scratch.feedback_dir.rglob("*.html")) == pages
    assert all((by_command / page).read_bytes() == (scratch.feedback_dir / page).read_bytes() for page in pages)
