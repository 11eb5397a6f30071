"""nbgrader's commands in the kit's process: the same schema version, release and export as its own processes give."""

import csv

import nbgrader.api
import pytest
from sqlalchemy import text

from gradekit.authoring.release import copy_source
from gradekit.core.nbgrader_cli import NbgraderError, run_nbgrader
from gradekit.core.nbgrader_in_process import (
    ASKED_OF_A_PROCESS,
    export,
    generate_assignment,
    nbgrader_error,
    schema_version,
)

nbgrader_run = pytest.mark.nbgrader  # these create gradebooks or run nbgrader's commands


@nbgrader_run
def test_the_version_read_in_process_is_the_one_alembic_prints():
    assert ASKED_OF_A_PROCESS is not schema_version  # the comparison is with nbgrader's own, not with itself
    assert schema_version() == ASKED_OF_A_PROCESS()


@nbgrader_run
def test_every_new_gradebook_of_the_session_is_stamped_with_it(tmp_path):
    assert nbgrader.api.get_alembic_version is schema_version
    with nbgrader.api.Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        stamped = gradebook.db.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert stamped == ASKED_OF_A_PROCESS()


@nbgrader_run
def test_a_release_made_here_is_the_one_nbgraders_command_makes(course, tmp_path):
    here = copy_source(course, tmp_path / "here", ("010_history", "090_decisions"))
    there = copy_source(course, tmp_path / "there", ("010_history", "090_decisions"))
    generate_assignment(here)
    run_nbgrader(there, "generate_assignment", there.assignment_id, "--force")
    made = sorted(p.relative_to(here.release_dir) for p in here.release_dir.rglob("*") if p.is_file())
    assert made == sorted(p.relative_to(there.release_dir) for p in there.release_dir.rglob("*") if p.is_file())
    for path in made:
        assert (here.release_dir / path).read_bytes() == (there.release_dir / path).read_bytes(), path
    with nbgrader.api.Gradebook(here.db_url) as ours, nbgrader.api.Gradebook(there.db_url) as theirs:
        assert [n.name for n in ours.find_assignment(here.assignment_id).notebooks] == [
            n.name for n in theirs.find_assignment(there.assignment_id).notebooks
        ]
        assert (
            ours.find_assignment(here.assignment_id).max_score == theirs.find_assignment(there.assignment_id).max_score
        )


@nbgrader_run
def test_a_release_that_nbgrader_refuses_raises_its_error(course, tmp_path):
    broken = copy_source(course, tmp_path / "broken", ("010_history",))
    notebook = broken.source_dir / "010_history.ipynb"
    notebook.write_text("{ not a notebook")
    with pytest.raises(NbgraderError, match="nbgrader generate_assignment failed"):
        generate_assignment(broken)


@nbgrader_run
def test_an_export_made_here_lists_every_student_of_the_gradebook(course, tmp_path):
    workspace = copy_source(course, tmp_path / "course", ("010_history",))
    generate_assignment(workspace)
    with nbgrader.api.Gradebook(workspace.db_url) as gradebook:
        gradebook.add_student("ada")
        gradebook.add_student("grace")
    target = tmp_path / "grades.csv"
    export(workspace, target)
    with target.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(row["student_id"] for row in rows) == ["ada", "grace"]
    assert {row["assignment"] for row in rows} == {workspace.assignment_id}


@nbgrader_run
def test_an_export_nbgrader_cannot_write_raises_its_error(course, tmp_path):
    workspace = copy_source(course, tmp_path / "course", ("010_history",))
    generate_assignment(workspace)
    with pytest.raises(NbgraderError, match="nbgrader export failed"):
        export(workspace, tmp_path / "no such folder" / "grades.csv")


@pytest.mark.unit
def test_nbgrader_error_keeps_its_error_lines_once_each():
    log = "[AutogradeApp | ERROR] There was an error\n[AutogradeApp | ERROR] There was an error\nTraceback\n"
    assert nbgrader_error({"success": False, "log": log}) == "There was an error"


@pytest.mark.unit
def test_nbgrader_error_without_error_lines_gives_the_end_of_the_log():
    assert nbgrader_error({"success": False, "log": "one\n\ntwo\n"}) == "one\ntwo"
    assert nbgrader_error({"success": False}) == "nbgrader reported a failure without a message"
