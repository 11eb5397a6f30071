"""A term on the demo class, walked in order with the commands as the TA's and the course lead's pages write them.

Release with a due date; an extension; hand-ins on time, extended, late and past the cut-off;
grading; a check tightened and the regrade it causes; one student regraded alone; the written
answers scored by a TA under their own account; a refresh; a backup restored on a fresh course
folder, exchange and gradebook, and regraded. The gradebook is PostgreSQL, shared by the course
team (deploy/shared_gradebook.py): the instructor runs every command as `kit-instructor`, the TA
enters scores as `kit-ta`, and the gradebook's log says who entered what.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import re
import shutil

import nbformat
import pytest
import sqlalchemy
from cohort_fixtures import (
    TIGHTENED,
    TIGHTENING,
    page_command,
    regrade_rows,
    row_facts,
    students_failing,
    tighten_check,
    tightest_cell,
)
from nbgrader.api import Gradebook
from services import postgres_server
from sqlalchemy.engine import make_url

from deploy.shared_gradebook import ENTRIES_TABLE, ENTRIES_VIEW, share_gradebook
from gradekit.authoring.due_header import METADATA_KEY
from gradekit.authoring.solutions import load_controls
from gradekit.commands.demo import demo_course, enrol, write_demo_student
from gradekit.commands.demo_cohort import DemoStudent, demo_cohort
from gradekit.commands.demo_folder import write_roster
from gradekit.commands.ta_pipeline import GRADEBOOK_VARIABLE, course_here, report_dir
from gradekit.core.course import REPO_ROOT, Course
from gradekit.core.grades import SubmissionGrades
from gradekit.core.manifest import Manifest
from gradekit.core.row_record import load_rows
from gradekit.grading.gradebook import read_grades
from gradekit.lms.export_step import lms_import_file

pytestmark = pytest.mark.cluster  # a real PostgreSQL server

TA_PAGE = REPO_ROOT / "docs" / "pages" / "ta.md"
LEAD_PAGE = REPO_ROOT / "docs" / "pages" / "course-lead.md"
NOTEBOOKS = ("010_history", "090_decisions")  # 090 has the written answers a TA grades
WRITTEN = "090_decisions"
TEAM, INSTRUCTOR, TA = "kit-team", "kit-instructor", "kit-ta"
DATABASE, FRESH_DATABASE = "autograd", "autograd_restored"
UTC = datetime.timezone.utc
DUE_SECTION = "The due date and the late policy"  # of the course lead's page
# The course lead's page states the due date as a line of nbgrader_config.py; the folder's configuration gets it.
DUE_LINE = next(line for line in LEAD_PAGE.read_text().splitlines() if line.startswith("c.CourseKit.due_dates = "))
DUE = datetime.datetime(2026, 12, 18, 23, 0, tzinfo=UTC)  # what that line says
GRANTED = page_command(TA_PAGE, "python -m gradekit extend")  # the TA page's extension: its student, date, reason
EXTENDED = GRANTED.student
DAY = 24 * 60  # minutes
TA_SHARE = 0.5  # the TA gives each written answer half its points


@dataclasses.dataclass(frozen=True)
class Term:
    course: Course
    manifest: Manifest  # the demo class's two notebooks
    students: tuple[DemoStudent, ...]  # the demo class as each first handed in
    late: str  # the demo's late student: one started day late
    past_cutoff: str  # handed in a week and a day late: scores 0
    admin: sqlalchemy.engine.URL  # the server's administrator, on its maintenance database


def member_url(admin, member: str, database: str = DATABASE) -> str:
    return admin.set(username=member, database=database).render_as_string(hide_password=False)


@contextlib.contextmanager
def shared_server():
    """A PostgreSQL server with the team's shared gradebook; yields the administrator's URL."""
    with postgres_server() as url:
        admin = make_url(url).set(database="postgres")
        share_gradebook(admin.render_as_string(hide_password=False), DATABASE, TEAM, [INSTRUCTOR, TA])
        yield admin


@contextlib.contextmanager
def signed_in_as_instructor(admin, database: str = DATABASE):
    """The instructor's shell: the course's gradebook URL names their own role."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(GRADEBOOK_VARIABLE, member_url(admin, INSTRUCTOR, database))
        yield


def course_on_the_shared_gradebook(folder) -> None:
    """The demo folder's configuration takes the gradebook from KIT_GRADEBOOK_URL, as the team's course does."""
    with (folder / "nbgrader_config.py").open("a") as config:
        config.write(f"c.CourseDirectory.db_url = os.environ[{GRADEBOOK_VARIABLE!r}]\n")


def run_page_command(page, start: str, folder, section: str = "") -> int:
    """The page's command line, run in `folder` as a TA types it there."""
    command = page_command(page, start, section)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        return command.run(command)


def with_roles(students: tuple[DemoStudent, ...]) -> tuple[tuple[DemoStudent, ...], str, str]:
    """The demo class, its extended student first handing in a day after the due date and one student a week and a day late.

    Returns the class, the demo's late student and the one past the cut-off.
    """
    late = next(s.student_id for s in students if s.late)
    honest_writers = [
        s.student_id
        for s in students
        if s.written and not (s.late or s.broken or s.copied_from) and s.student_id != EXTENDED
    ]
    past_cutoff = honest_writers[-1]
    minutes = {EXTENDED: DAY, past_cutoff: 8 * DAY}
    shifted = tuple(
        dataclasses.replace(s, minutes_after_due=minutes[s.student_id]) if s.student_id in minutes else s
        for s in students
    )
    return shifted, late, past_cutoff


@pytest.fixture(scope="module")
def term(course, manifest, tmp_path_factory):
    """The demo's course folder on the team's shared gradebook, its class enrolled; nothing released or handed in."""
    narrow = manifest.only(list(NOTEBOOKS))
    students, late, past_cutoff = with_roles(demo_cohort(narrow, load_controls(narrow)))
    with shared_server() as admin, signed_in_as_instructor(admin):
        folder = demo_course(course, narrow, tmp_path_factory.mktemp("term") / "demo-course").root
        course_on_the_shared_gradebook(folder)
        course = course_here(folder)
        enrol(course, students)  # the class list, as a TA sets it up before the term
        yield Term(course, narrow, students, late, past_cutoff, admin)


def test_a_term_on_the_demo_class_from_release_to_restore(term, capsys, tmp_path):
    course = release_with_a_due_date(term)
    grant_the_extension(course, capsys)
    hand_in(course, term)
    first = grade(course, term, capsys)
    regrade_after_a_tightened_check(course, term, first, capsys)
    regrade_one_student_alone(course, term, capsys)
    entered = grade_written_answers_as_the_ta(course, term)
    refresh_after_manual_grading(course, term, entered, capsys)
    back_up_and_restore(course, term, tmp_path, capsys)


def release_with_a_due_date(term: Term) -> Course:
    """Step 1: the course lead states the due date and releases again; every notebook opens with it."""
    with (term.course.root / "nbgrader_config.py").open("a") as config:
        config.write(DUE_LINE + "\n")
    assert run_page_command(LEAD_PAGE, "python -m gradekit release", term.course.root, DUE_SECTION) == 0
    course = course_here(term.course.root)
    assert course.due_date == DUE
    for name in NOTEBOOKS:
        released = nbformat.read(course.release_dir / f"{name}.ipynb", as_version=4)
        assert released.cells[0].source.startswith("**Due Friday 18 December 2026, 23:00 UTC.**"), name
        assert released.metadata[METADATA_KEY] == "2026-12-18T23:00:00+00:00", name
    return course


def grant_the_extension(course: Course, capsys) -> None:
    """Step 2: the TA page's extension, granted in the course folder."""
    capsys.readouterr()
    assert run_page_command(TA_PAGE, "python -m gradekit extend", course.root) == 0
    assert f"{EXTENDED}: extended until {GRANTED.until}" in capsys.readouterr().out


def hand_in(course: Course, term: Term) -> None:
    """Step 3: the class hands in; the extended student hands in 010 alone first (090 comes within the extension)."""
    first_only = term.manifest.only([TIGHTENED])
    for student in term.students:
        write_demo_student(
            course, first_only if student.student_id == EXTENDED else term.manifest, student, due_naive()
        )
    write_roster(course)


def due_naive() -> datetime.datetime:
    """The due date as the demo's hand-ins take it: UTC without its zone."""
    return DUE.replace(tzinfo=None)


def grade(course: Course, term: Term, capsys) -> dict[str, SubmissionGrades]:
    """Step 4: the TA page's grade command; the late policy's penalties in every file it writes."""
    capsys.readouterr()
    code = run_page_command(TA_PAGE, "python -m gradekit grade --collect", course.root, "One command")
    said = capsys.readouterr().out
    assert code == 0, said
    assert f"{term.past_cutoff}: handed in past the late policy's cut-off: the submission scores 0" in said
    table, exported, lms = students_csv(course), grades_csv(course), lms_scores(course)
    for student in term.students:
        row, name = table[student.student_id], student.student_id
        score = float(row["score"]) + float(row["written_score"])
        penalty = {term.late: 0.1 * score, term.past_cutoff: score}.get(
            name, 0.0
        )  # a tenth per started day; a week: all
        assert float(row["late_penalty"]) == pytest.approx(penalty), name
        assert float(exported[name]["late_submission_penalty"]) == pytest.approx(penalty), name
        assert float(row["score_after_penalty"]) == pytest.approx(score - penalty), name
        assert lms[name] == pytest.approx(score - penalty), name
        assert row["past_cutoff"] == ("yes" if name == term.past_cutoff else "no"), name
        assert row["extended_until"] == (GRANTED.until if name == EXTENDED else ""), name
    assert table[term.late]["minutes_late"] == "95" and table[term.past_cutoff]["minutes_late"] == str(8 * DAY)
    assert table[EXTENDED]["minutes_late"] == "0"  # a day after the due date, within the extension
    assert {row["duedate"] for row in exported.values()} == {"2026-12-18 23:00:00"}
    page = (report_dir(course) / "report.html").read_text()
    assert "past the late policy&#x27;s cut-off: the submission scores 0" in page
    assert f"late penalty {float(table[term.late]['late_penalty']):g} points" in page
    assert GRANTED.why in page and GRANTED.until in page
    return {student.student_id: read_grades(course, student.student_id) for student in term.students}


def students_csv(course: Course) -> dict[str, dict[str, str]]:
    with (report_dir(course) / "students.csv").open(newline="") as table:
        return {row["student_id"]: row for row in csv.DictReader(table)}


def grades_csv(course: Course) -> dict[str, dict[str, str]]:
    with (course.root / "grades.csv").open(newline="") as table:
        return {row["student_id"]: row for row in csv.DictReader(table)}


def lms_scores(course: Course) -> dict[str, float]:
    """The assignment's column of the LMS import file, by student (the roster's login is the student id)."""
    with lms_import_file(course).open(newline="") as table:
        return {row["SIS Login ID"]: float(row[course.assignment_id]) for row in csv.DictReader(table)}


def regrade_after_a_tightened_check(course: Course, term: Term, first: dict[str, SubmissionGrades], capsys) -> None:
    """Step 5: a check tightened in source/, the class graded again; exactly those who passed it are listed."""
    cell = tightest_cell(term.manifest, term.students)
    tighten_check(course, cell)
    capsys.readouterr()
    code = run_page_command(TA_PAGE, "python -m gradekit grade --collect", course.root, "One command")
    said = capsys.readouterr().out
    assert code == 0, said
    everyone = {student.student_id for student in term.students}
    expected = sorted(everyone - students_failing(term.students, TIGHTENED, cell))
    changed = regrade_rows(course)
    assert sorted(changed) == expected
    points = next(test.points for test in term.manifest.test_cells_of(TIGHTENED) if test.cell == cell)
    for student, line in changed.items():
        assert line["cells_changed"] == f"{TIGHTENED}/{cell}: {points:g} -> 0 of {points:g}", line
        assert TIGHTENING.split('"')[1] in line["diagnosis"], line
        assert float(line["before"]) == pytest.approx(first[student].after_penalty), line  # what the student had
    assert f"regrade: {len(expected)} student(s) changed score, {len(everyone) - len(expected)} unchanged" in said
    for student in everyone:  # the unchanged are counted, not listed
        assert (f"\n  {student}: " in said) == (student in expected), student


def regrade_one_student_alone(course: Course, term: Term, capsys) -> None:
    """Step 6: the extended student hands in both notebooks within the extension; the TA regrades them alone."""
    (extended,) = [student for student in term.students if student.student_id == EXTENDED]
    write_demo_student(course, term.manifest, dataclasses.replace(extended, minutes_after_due=3 * DAY), due_naive())
    others = sorted(student.student_id for student in term.students if student.student_id != EXTENDED)
    before = {student: read_grades(course, student) for student in others}
    records = load_rows(report_dir(course))
    capsys.readouterr()
    code = run_page_command(TA_PAGE, "python -m gradekit grade --student", course.root)
    said = capsys.readouterr().out
    assert code == 0, said
    assert "regrade: 1 student(s) changed score, 0 unchanged" in said
    (line,) = regrade_rows(course).values()
    tests = sorted(term.manifest.test_cells_of(WRITTEN), key=lambda test: test.cell)  # the diff lists cells by name
    assert line["student_id"] == EXTENDED
    assert line["cells_changed"] == "; ".join(f"{WRITTEN}/{t.cell}: 0 -> {t.points:g} of {t.points:g}" for t in tests)
    regraded = read_grades(course, EXTENDED)
    assert regraded.seconds_late == 0 and len(regraded.waiting) == len(extended.written)
    after = load_rows(report_dir(course))
    assert sorted(after) == sorted([*others, EXTENDED])  # the reports still cover the whole class
    for student in others:
        assert read_grades(course, student) == before[student], student
        assert after[student].graded_by == records[student].graded_by, student


def grade_written_answers_as_the_ta(course: Course, term: Term) -> set[tuple[str, str, str, float]]:
    """Step 7: the TA, signed in as themselves, scores every written answer waiting (formgrader makes these writes)."""
    entered = set()
    with Gradebook(member_url(term.admin, TA), course.course_id) as gradebook:
        for student in term.students:
            for answer in read_grades(course, student.student_id).waiting:
                score = TA_SHARE * answer.max_score
                grade = gradebook.find_grade(answer.cell, answer.notebook, course.assignment_id, student.student_id)
                grade.manual_score = score
                gradebook.db.commit()
                entered.add((student.student_id, answer.notebook, answer.cell, score))
    assert {student for student, *_ in entered} >= {EXTENDED, term.past_cutoff}
    by_ta = [entry[1:] for entry in logged_entries(term.admin) if entry[0] == TA]
    assert sorted(by_ta) == sorted(entered)
    return entered


def logged_entries(admin, database: str = DATABASE) -> list[tuple]:
    """The shared gradebook's log of manual scores, as the instructor reads it."""
    engine = sqlalchemy.create_engine(member_url(admin, INSTRUCTOR, database))
    try:
        with engine.connect() as connection:
            query = f"SELECT entered_by, student, notebook, cell, new_score FROM {ENTRIES_VIEW}"
            return [tuple(row) for row in connection.exec_driver_sql(query)]
    finally:
        engine.dispose()


def refresh_after_manual_grading(course: Course, term: Term, entered, capsys) -> None:
    """Step 8: the TA page's refresh; feedback, grades.csv, students.csv, the LMS file and the report follow the gradebook."""
    capsys.readouterr()
    code = run_page_command(TA_PAGE, "python -m gradekit grade --reports-only", course.root)
    said = capsys.readouterr().out
    assert code == 0, said
    assert "written answers waiting for a TA: none" in said
    repriced = {student for student, *_ in entered} & {term.late, term.past_cutoff}
    assert f"late penalties worked out again from the current scores: {len(repriced)} notebook(s)" in said
    table, exported, lms = students_csv(course), grades_csv(course), lms_scores(course)
    ta_scores = {student: sum(s for name, _, _, s in entered if name == student) for student, *_ in entered}
    for student, (total, penalty, notebooks) in gradebook_totals(course, term).items():
        row = table[student]
        assert row["waiting_for_ta"] == "0", student
        assert float(row["written_score"]) == ta_scores.get(student, 0.0), student
        assert float(row["late_penalty"]) == pytest.approx(penalty), student
        assert float(row["score_after_penalty"]) == pytest.approx(max(0.0, total - penalty)), student
        assert float(exported[student]["raw_score"]) == pytest.approx(total), student
        assert float(exported[student]["late_submission_penalty"]) == pytest.approx(penalty), student
        assert lms[student] == pytest.approx(max(0.0, total - penalty)), student
        for notebook, (score, max_score, taken) in notebooks.items():
            page = course.feedback_dir / student / course.assignment_id / f"{notebook}.html"
            if page.exists():  # the page's score is after the penalty, which it shows apart
                text = page.read_text()
                assert f"{notebook} (Score: {max(0.0, score - taken):g} / {max_score:g})" in text, (student, notebook)
                assert (f"Late submission penalty (Score: -{round(taken, 2)})" in text) == bool(taken), (
                    student,
                    notebook,
                )
    assert table[term.past_cutoff]["score_after_penalty"] == "0"
    page = (report_dir(course) / "report.html").read_text()
    assert "<b>0</b>with written answers waiting for a TA (0 points)" in page  # the headline's figure
    assert re.search(r"\d waiting for a TA", page) is None  # and no written answer's row says any waits


def gradebook_totals(course: Course, term: Term) -> dict[str, tuple[float, float, dict[str, tuple[float, ...]]]]:
    """Per student, as the gradebook holds it: the total, the late penalty, and per notebook its score, points and penalty."""
    totals = {}
    with Gradebook(member_url(term.admin, INSTRUCTOR), course.course_id) as gradebook:
        for submission in gradebook.find_assignment(course.assignment_id).submissions:
            notebooks = {
                n.name: (float(n.score), float(n.max_score), float(n.late_submission_penalty or 0))
                for n in submission.notebooks
            }
            penalty = sum(taken for _, _, taken in notebooks.values())
            totals[submission.student.id] = (float(submission.score), penalty, notebooks)
    return totals


def back_up_and_restore(course: Course, term: Term, tmp_path, capsys) -> None:
    """Step 9: the course lead's backup, restored on a fresh folder, exchange and gradebook, regraded to the same rows."""
    rows, logged = load_rows(report_dir(course)), logged_entries(term.admin)
    assert run_page_command(LEAD_PAGE, "python -m gradekit backup", course.root, "Backups") == 0
    archive = (course.root / page_command(LEAD_PAGE, "python -m gradekit backup", "Backups").archive).resolve()
    fresh = tmp_path / "fresh-course"
    fresh.mkdir()
    restore = page_command(LEAD_PAGE, "python -m gradekit restore", "Backups")
    shutil.copyfile(archive, (fresh / restore.archive).resolve())  # where the page's command finds it
    empty_team_database(term.admin, FRESH_DATABASE)
    with signed_in_as_instructor(term.admin, FRESH_DATABASE):
        assert run_page_command(LEAD_PAGE, "python -m gradekit restore", fresh, "Backups") == 0
        share_gradebook(term.admin.render_as_string(hide_password=False), FRESH_DATABASE, TEAM, [INSTRUCTOR, TA])
        restored = course_here(fresh)
        assert restored.exchange_root != course.exchange_root and restored.db_url != course.db_url
        assert run_page_command(LEAD_PAGE, "python -m gradekit grade --reports-only", fresh, "Backups") == 0
        assert row_facts(load_rows(report_dir(restored)).values()) == row_facts(rows.values())
        capsys.readouterr()
        assert run_page_command(TA_PAGE, "python -m gradekit grade --collect", fresh, "One command") == 0
        said = capsys.readouterr().out
        assert row_facts(load_rows(report_dir(restored)).values()) == row_facts(rows.values())
        assert f"regrade: 0 student(s) changed score, {len(rows)} unchanged" in said
        for student in rows:
            assert read_grades(restored, student).written == read_grades(course, student).written, student
    assert logged_entries(term.admin, FRESH_DATABASE) == logged  # who entered each score, restored too
    with pytest.raises(sqlalchemy.exc.ProgrammingError, match="permission denied"):  # and the team still cannot edit it
        as_member(term.admin, TA, FRESH_DATABASE, f"DELETE FROM {ENTRIES_TABLE}")


def empty_team_database(admin, database: str) -> None:
    """What the administrator makes for a restore on the team's shared gradebook: an empty database the team owns."""
    engine = sqlalchemy.create_engine(admin, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{database}" OWNER "{TEAM}"')
    finally:
        engine.dispose()


def as_member(admin, member: str, database: str, statement: str) -> None:
    engine = sqlalchemy.create_engine(member_url(admin, member, database))
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql(statement)
            connection.commit()
    finally:
        engine.dispose()
