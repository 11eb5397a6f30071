"""A PostgreSQL gradebook the course team shares, where each member signs in as themselves.

nbgrader's own FAQ warns against several graders on one SQLite file; this is the
documented alternative. What it makes, idempotently (run it again as the team grows):

    <team>                a role nobody signs in as; it owns the database and nbgrader's tables
    one role per member   signs in (by peer authentication on the hub: the account's own name),
                          and takes the team's role at once, so a table made by anyone is the team's
    <database>            CONNECT for the team only: no student can open it
    kit_grade_entries     who entered each manual score, when, and the score before and after;
                          written by a trigger as <team>-log, a role of its own that signs in
                          nowhere and may do nothing but keep the log; readable by the team,
                          writable by nobody of the team
    manual_grades_entered the same, readable (what the course lead queries)

The log is a record for the team, not a guard against it: the team owns
nbgrader's tables and could drop the trigger, or swap a table the trigger reads
for one that changes the log. The trigger never runs with more than the log
role's rights, so no member can become the server's administrator through it.
Run as the database's administrator:

    python deploy/shared_gradebook.py --database autograd --team kit-team \\
        --member kit-instructor --member kit-ta --host /var/run/postgresql
"""

from __future__ import annotations

import argparse
import sys
import urllib.parse
from collections.abc import Sequence

import sqlalchemy
from sqlalchemy.engine import URL, make_url

ENTRIES_TABLE = "kit_grade_entries"
ENTRIES_VIEW = "manual_grades_entered"
LOG_FUNCTION = "kit_log_manual_score"
LOG_TRIGGER = "kit_manual_score_entered"

# What the trigger records: the signed-in role (session_user, not the team role it took), and
# where the score sits, looked up at once, since a regrade replaces nbgrader's rows. It runs as
# the log's own role (never the administrator): the tables it reads are the team's, and a member
# who swapped one for a view of their own would otherwise run code with the definer's rights.
READ_BY_THE_LOG = ("submitted_notebook", "submitted_assignment", "assignment", "notebook", "base_cell")
ENTRIES_SQL = """
CREATE TABLE IF NOT EXISTS {ENTRIES_TABLE} (
    id bigserial PRIMARY KEY,
    entered_by text NOT NULL,
    entered_at timestamptz NOT NULL DEFAULT now(),
    student text, assignment text, notebook text, cell text,
    old_score double precision, new_score double precision
);
REVOKE ALL ON {ENTRIES_TABLE} FROM PUBLIC;
CREATE OR REPLACE VIEW {ENTRIES_VIEW} AS
    SELECT entered_by, entered_at, student, assignment, notebook, cell, old_score, new_score
    FROM {ENTRIES_TABLE} ORDER BY id;
REVOKE ALL ON {ENTRIES_VIEW} FROM PUBLIC;
CREATE OR REPLACE FUNCTION {LOG_FUNCTION}() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $log$
DECLARE
    before double precision := NULL;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        before := OLD.manual_score;
    END IF;
    IF NEW.manual_score IS NOT DISTINCT FROM before THEN
        RETURN NEW;
    END IF;
    INSERT INTO {ENTRIES_TABLE} (entered_by, student, assignment, notebook, cell, old_score, new_score)
    SELECT session_user, sa.student_id, a.name, n.name, c.name, before, NEW.manual_score
    FROM submitted_notebook sn
    JOIN submitted_assignment sa ON sa.id = sn.assignment_id
    JOIN assignment a ON a.id = sa.assignment_id
    JOIN notebook n ON n.id = sn.notebook_id
    JOIN base_cell c ON c.id = NEW.cell_id
    WHERE sn.id = NEW.notebook_id;
    RETURN NEW;
END
$log$;
REVOKE ALL ON FUNCTION {LOG_FUNCTION}() FROM PUBLIC;
-- The log's own role keeps it (a gradebook restored by a member holds it as the team's: it is taken back).
ALTER TABLE {ENTRIES_TABLE} OWNER TO {LOG_ROLE};
ALTER VIEW {ENTRIES_VIEW} OWNER TO {LOG_ROLE};
ALTER FUNCTION {LOG_FUNCTION}() OWNER TO {LOG_ROLE};
DROP TRIGGER IF EXISTS {LOG_TRIGGER} ON grade;
CREATE TRIGGER {LOG_TRIGGER} AFTER INSERT OR UPDATE OF manual_score ON grade
    FOR EACH ROW EXECUTE FUNCTION {LOG_FUNCTION}();
"""


def log_role(team: str) -> str:
    """The role that keeps the log: it signs in nowhere, and nobody is granted it."""
    return f"{team}-log"


def quoted(name: str) -> str:
    """A role or database name as an SQL identifier: account names carry hyphens."""
    return '"' + name.replace('"', '""') + '"'


def share_gradebook(admin_url: str, database: str, team: str, members: Sequence[str]) -> None:
    """Make (or bring up to date) the team's roles, its database, nbgrader's tables and the log."""
    admin = make_url(admin_url)
    with _autocommit(admin) as connection:
        _roles(connection, team, members)
        _database(connection, database, team)
    on_gradebook = admin.set(database=database)
    with _autocommit(on_gradebook) as connection:
        connection.exec_driver_sql(f"GRANT USAGE, CREATE ON SCHEMA public TO {quoted(team)}")
    _nbgrader_tables(on_gradebook, team)
    keeper = quoted(log_role(team))
    with _autocommit(on_gradebook) as connection:
        connection.exec_driver_sql(f"GRANT USAGE ON SCHEMA public TO {keeper}")
        connection.exec_driver_sql(f"GRANT SELECT ON {', '.join(READ_BY_THE_LOG)} TO {keeper}")
        connection.exec_driver_sql(entries_sql(keeper))
        connection.exec_driver_sql(f"GRANT SELECT ON {ENTRIES_TABLE}, {ENTRIES_VIEW} TO {quoted(team)}")
        # Reading the log's counter too lets a member back the whole gradebook up (pg_dump reads it); it writes nothing.
        connection.exec_driver_sql(f"GRANT SELECT ON SEQUENCE {ENTRIES_TABLE}_id_seq TO {quoted(team)}")


def entries_sql(keeper: str) -> str:
    return ENTRIES_SQL.format(
        ENTRIES_TABLE=ENTRIES_TABLE,
        ENTRIES_VIEW=ENTRIES_VIEW,
        LOG_FUNCTION=LOG_FUNCTION,
        LOG_TRIGGER=LOG_TRIGGER,
        LOG_ROLE=keeper,
    )


def _roles(connection, team: str, members: Sequence[str]) -> None:
    existing = {row[0] for row in connection.exec_driver_sql("SELECT rolname FROM pg_roles")}
    if team not in existing:
        connection.exec_driver_sql(f"CREATE ROLE {quoted(team)} NOLOGIN")
    if log_role(team) not in existing:
        connection.exec_driver_sql(f"CREATE ROLE {quoted(log_role(team))} NOLOGIN NOSUPERUSER NOINHERIT")
    for member in members:
        if member not in existing:
            connection.exec_driver_sql(f"CREATE ROLE {quoted(member)} LOGIN")
        connection.exec_driver_sql(f"GRANT {quoted(team)} TO {quoted(member)}")
        # On sign-in the member acts as the team, so what they create belongs to the team.
        connection.exec_driver_sql(f"ALTER ROLE {quoted(member)} SET role = {quoted(team)}")


def _database(connection, database: str, team: str) -> None:
    found = connection.exec_driver_sql("SELECT 1 FROM pg_database WHERE datname = %(name)s", {"name": database})
    if found.first() is None:
        connection.exec_driver_sql(f"CREATE DATABASE {quoted(database)} OWNER {quoted(team)}")
    connection.exec_driver_sql(f"REVOKE ALL ON DATABASE {quoted(database)} FROM PUBLIC")
    connection.exec_driver_sql(f"GRANT CONNECT, TEMPORARY ON DATABASE {quoted(database)} TO {quoted(team)}")


def _nbgrader_tables(on_gradebook: URL, team: str) -> None:
    """nbgrader makes its own tables (and stamps its migrations), acting as the team so the team owns them."""
    from nbgrader.api import Gradebook

    as_team = on_gradebook.update_query_dict({"options": f"-c role={team}"})
    Gradebook(as_team.render_as_string(hide_password=False)).close()


class _autocommit:
    """A connection outside a transaction: CREATE DATABASE refuses to run inside one."""

    def __init__(self, url: URL):
        self.engine = sqlalchemy.create_engine(url, isolation_level="AUTOCOMMIT")

    def __enter__(self):
        self.connection = self.engine.connect()
        return self.connection

    def __exit__(self, *exc_info):
        self.connection.close()
        self.engine.dispose()


def member_url(database: str, member: str, host: str) -> str:
    """The URL a member's server hands nbgrader: their own role, over the server's socket folder (peer authentication)."""
    return f"postgresql://{urllib.parse.quote(member)}@/{database}?host={urllib.parse.quote(host, safe='/')}"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    top.add_argument("--database", required=True, help="the gradebook's database name, e.g. autograd")
    top.add_argument("--team", required=True, help="the team's role (no one signs in as it), e.g. autograd-team")
    top.add_argument("--member", action="append", default=[], help="a member's account name (repeatable)")
    top.add_argument("--host", default="/var/run/postgresql", help="the server's socket folder or host name")
    top.add_argument("--admin", default="postgres", help="the administrator's role (default: postgres)")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.member:
        raise SystemExit("name at least one member of the course team with --member")
    admin_url = (
        f"postgresql://{urllib.parse.quote(args.admin)}@/postgres?host={urllib.parse.quote(args.host, safe='/')}"
    )
    share_gradebook(admin_url, args.database, args.team, args.member)
    print(f"gradebook {args.database}: shared by {args.team} ({', '.join(args.member)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
