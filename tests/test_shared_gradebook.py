"""deploy/shared_gradebook.py on a real PostgreSQL server: each member signs in as themselves, the log names who scored."""

from __future__ import annotations

import contextlib

import pytest
import sqlalchemy
from nbgrader.api import Gradebook
from services import postgres_server
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, ProgrammingError

from deploy.shared_gradebook import ENTRIES_TABLE, ENTRIES_VIEW, LOG_FUNCTION, share_gradebook

pytestmark = pytest.mark.cluster

DATABASE, TEAM = "autograd", "kit-team"
INSTRUCTOR, TA, OUTSIDER = "kit-instructor", "kit-ta", "kit-student"


@pytest.fixture(scope="module")
def shared():
    """A server with the team's gradebook, one assignment with a written answer, and a student's submission."""
    with postgres_server() as url:
        admin = make_url(url).set(database="postgres")
        share_gradebook(admin.render_as_string(hide_password=False), DATABASE, TEAM, [INSTRUCTOR, TA])
        with _sql(admin, autocommit=True) as connection:
            connection.exec_driver_sql(f'CREATE ROLE "{OUTSIDER}" LOGIN')
        with gradebook_as(admin, INSTRUCTOR) as gradebook:
            gradebook.add_assignment("autograd")
            gradebook.add_notebook("090_decisions", "autograd")
            for cell in ("answer_hand_graph", "answer_compile_blindly"):
                gradebook.add_grade_cell(cell, "090_decisions", "autograd", max_score=3, cell_type="markdown")
            gradebook.add_student("ada")
            gradebook.add_submission("autograd", "ada")
        yield admin


def member(admin, name: str):
    return admin.set(username=name, database=DATABASE)


@contextlib.contextmanager
def gradebook_as(admin, name: str):
    gradebook = Gradebook(member(admin, name).render_as_string(hide_password=False))
    try:
        yield gradebook
    finally:
        gradebook.close()


@contextlib.contextmanager
def _sql(url, autocommit: bool = False):
    engine = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT" if autocommit else None)
    try:
        with engine.connect() as connection:
            yield connection
    finally:
        engine.dispose()


def score(admin, name: str, cell: str, value: float) -> None:
    with gradebook_as(admin, name) as gradebook:
        grade = gradebook.find_grade(cell, "090_decisions", "autograd", "ada")
        grade.manual_score = value
        gradebook.db.commit()


def entries(admin) -> list[tuple]:
    with _sql(member(admin, INSTRUCTOR)) as connection:
        query = f"SELECT entered_by, student, notebook, cell, old_score, new_score FROM {ENTRIES_VIEW}"
        return [tuple(row) for row in connection.exec_driver_sql(query)]


def test_each_member_signs_in_as_themselves_and_acts_as_the_team_which_owns_the_tables(shared):
    for name in (INSTRUCTOR, TA):
        with _sql(member(shared, name)) as connection:
            assert tuple(connection.exec_driver_sql("SELECT session_user, current_user").one()) == (name, TEAM)
    with _sql(shared.set(database=DATABASE)) as connection:
        query = (
            "SELECT tableowner FROM pg_tables WHERE tablename IN ('grade', 'submitted_assignment', 'alembic_version')"
        )
        owners = {row[0] for row in connection.exec_driver_sql(query)}
    assert owners == {TEAM}


def test_the_log_names_who_changed_a_score_and_an_unchanged_write_is_not_logged(shared):
    score(shared, TA, "answer_hand_graph", 2.5)
    with _sql(member(shared, TA)) as connection:  # saved again unchanged (an UPDATE all the same): nothing to record
        connection.exec_driver_sql("UPDATE grade SET manual_score = manual_score")
        connection.commit()
    score(shared, INSTRUCTOR, "answer_hand_graph", 3.0)
    logged = [row for row in entries(shared) if row[3] == "answer_hand_graph"]
    assert logged == [
        (TA, "ada", "090_decisions", "answer_hand_graph", None, 2.5),
        (INSTRUCTOR, "ada", "090_decisions", "answer_hand_graph", 2.5, 3.0),
    ]


@pytest.mark.parametrize(
    "statement",
    [
        f"DELETE FROM {ENTRIES_TABLE}",
        f"UPDATE {ENTRIES_TABLE} SET entered_by = 'someone else'",
        f"INSERT INTO {ENTRIES_TABLE} (entered_by) VALUES ('someone else')",
    ],
)
def test_the_team_cannot_rewrite_the_log(shared, statement):
    with _sql(member(shared, TA)) as connection, pytest.raises(ProgrammingError, match="permission denied"):
        connection.exec_driver_sql(statement)


def test_a_role_outside_the_team_cannot_connect(shared):
    with pytest.raises(OperationalError, match="permission denied"):
        with _sql(member(shared, OUTSIDER)) as connection:
            connection.exec_driver_sql("SELECT 1")


def test_sharing_again_keeps_the_grades_and_the_log(shared):
    before = entries(shared)
    share_gradebook(shared.render_as_string(hide_password=False), DATABASE, TEAM, [INSTRUCTOR, TA])
    assert entries(shared) == before
    with gradebook_as(shared, TA) as gradebook:
        assert gradebook.find_submission("autograd", "ada").student.id == "ada"


def test_a_member_backs_up_the_whole_gradebook_with_its_log(shared):
    from gradekit.grading.gradebook_copy import copy_gradebook

    score(shared, TA, "answer_compile_blindly", 1.0)
    dump = copy_gradebook(member(shared, INSTRUCTOR).render_as_string(hide_password=False)).decode()
    assert f"COPY public.{ENTRIES_TABLE} " in dump and "answer_compile_blindly" in dump


# A TA swaps a table the log's trigger reads for a view that calls their own function, which tries to
# make them the server's administrator and rewrite the log whenever it runs with another's rights.
SWAP_A_TABLE_THE_TRIGGER_READS = """
CREATE FUNCTION public.kit_take_over() RETURNS int LANGUAGE plpgsql AS $f$
BEGIN
    IF current_user <> 'kit-team' THEN
        EXECUTE 'ALTER ROLE "kit-ta" SUPERUSER';
        DELETE FROM kit_grade_entries;
    END IF;
    RETURN 1;
END $f$;
ALTER TABLE base_cell RENAME TO base_cell_kept;
CREATE VIEW base_cell AS SELECT * FROM base_cell_kept WHERE kit_take_over() = 1;
"""
PUT_IT_BACK = """
DROP VIEW base_cell;
ALTER TABLE base_cell_kept RENAME TO base_cell;
DROP FUNCTION public.kit_take_over();
"""


def test_a_ta_who_swaps_a_table_the_trigger_reads_gains_no_rights_and_the_log_keeps_its_entries(shared):
    before = entries(shared)
    assert before
    with _sql(member(shared, TA)) as connection:
        connection.exec_driver_sql(SWAP_A_TABLE_THE_TRIGGER_READS)
        connection.commit()
    try:
        with _sql(member(shared, TA)) as connection, pytest.raises(ProgrammingError, match="permission denied"):
            connection.exec_driver_sql("UPDATE grade SET manual_score = 1.0")  # the trigger cannot read the swap
    finally:
        with _sql(member(shared, TA)) as connection:
            connection.exec_driver_sql(PUT_IT_BACK)
            connection.commit()
    with _sql(shared.set(database=DATABASE)) as connection:
        roles = "SELECT rolname, rolsuper FROM pg_roles WHERE rolname IN ('kit-ta', 'kit-team', 'kit-team-log')"
        assert dict(tuple(row) for row in connection.exec_driver_sql(roles)) == {
            "kit-ta": False,
            "kit-team": False,
            "kit-team-log": False,
        }
        owner = f"SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = '{LOG_FUNCTION}'"
        assert connection.exec_driver_sql(owner).scalar() == "kit-team-log"
    assert entries(shared) == before
