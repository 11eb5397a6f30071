"""The course on a real JupyterHub: deploy/ sets it up, four real accounts walk it in Chromium.

deploy/create_course.py makes the instructor, a TA and two students (real
accounts, own homes, PAM passwords), the exchange, the course folder the team
shares and the team's PostgreSQL gradebook (a server on a socket only, peer
authentication); the hub runs deploy/jupyterhub_config.py as root on loopback.
The instructor logs in and releases `autograd`; each student logs in, fetches
it in the Assignments tab, answers (kit-student-a the reference and 090's model
written answers, kit-student-b the reference with one misconception) and
submits; the instructor grades with the kit's command; the TA signs in as
themselves and scores kit-student-a's written answers in their own formgrader;
the gradebook's log names the TA for exactly those scores; the instructor
refreshes the reports and releases feedback; each student fetches their own.
Along the way, each student's uid tries to read what belongs to the other or
to the course, the gradebook included. Screenshots go to test-artifacts/hub/.
"""

import csv
import os
import pwd
import shutil
from pathlib import Path

import nbformat
import pytest
from services import postgres_on_socket

from deploy.student_limits import HUB_GROUP, StudentLimits
from gradekit.authoring.solutions import load_controls
from gradekit.core.course import REPO_ROOT
from gradekit.core.manifest import load_manifest
from gradekit.proof.subjects import answer_sources, fill_answers, written_answer_sources
from journeys import hub_ui, lab_ui
from journeys.conftest import Screenshots
from journeys.formgrader_ui import open_the_waiting_submission, score_written_answers
from journeys.hub import (
    GRADEBOOK_DATABASE,
    INSTRUCTOR,
    STUDENTS,
    TA,
    created_course,
    journey_artifacts,
    processes_of,
    require_hub_tools,
    run_as,
    running_hub,
    searchable_interpreter,
)

pytestmark = pytest.mark.browser

ASSIGNMENT = "autograd"
CONTROL = "010-square_sum_grad__no_reduction"  # kit-student-b's misconception, in 010_history
ARTIFACTS = REPO_ROOT / "test-artifacts" / "hub"
TEAM_ONLY = ("Formgrader", "Course List")
WRITTEN = "090_decisions"  # the notebook with written answers, which the TA scores
TA_SCORES = {"answer_hand_graph": 2.5, "answer_compile_blindly": 2.0}


@pytest.fixture
def artifacts():
    with journey_artifacts(ARTIFACTS) as folder:
        yield folder


@pytest.fixture
def hub_course(artifacts):
    require_hub_tools()
    with searchable_interpreter(), postgres_on_socket() as socket_folder:
        with created_course(artifacts, socket_folder) as course, running_hub(course, artifacts) as hub:
            yield course, hub, socket_folder


def test_a_class_on_the_hub(hub_course, hub_page, artifacts):
    course, hub, socket_folder = hub_course
    page, screenshot = hub_page, Screenshots(artifacts)
    manifest = load_manifest()
    control = next(c for c in load_controls(manifest) if c.name == CONTROL)

    hub_ui.log_in(page, hub, INSTRUCTOR, course.passwords[INSTRUCTOR], screenshot)
    assert set(TEAM_ONLY) <= set(hub_ui.nbgrader_menu(page))
    _as_instructor(course, "nbgrader", "generate_assignment", ASSIGNMENT, "--force")
    _as_instructor(course, "nbgrader", "release_assignment", ASSIGNMENT)
    formgrader = lab_ui.open_formgrader(page)
    formgrader.locator("#main-table tr", has_text=ASSIGNMENT).first.wait_for(timeout=lab_ui.STEP_TIMEOUT_MS)
    screenshot(page, "instructor-formgrader")
    hub_ui.log_out(page, hub)

    written = written_answer_sources(manifest, WRITTEN, course.course_dir / "source" / ASSIGNMENT / f"{WRITTEN}.ipynb")
    assert set(written) == set(TA_SCORES)
    answers = {
        STUDENTS[0]: {nb.name: answer_sources(manifest, nb.name, None) for nb in manifest.notebooks},
        STUDENTS[1]: {nb.name: answer_sources(manifest, nb.name, control) for nb in manifest.notebooks},
    }
    answers[STUDENTS[0]][WRITTEN] |= written
    for student in STUDENTS:
        hub_ui.log_in(page, hub, student, course.passwords[student], screenshot)
        assert not set(TEAM_ONLY) & set(hub_ui.nbgrader_menu(page)), "a student sees the course team's tools"
        lab_ui.open_assignments(page)
        lab_ui.fetch(page, ASSIGNMENT)
        screenshot(page, f"{student}-fetched")
        _answer(course, student, answers[student])
        assert ASSIGNMENT in lab_ui.submit(page, ASSIGNMENT)
        screenshot(page, f"{student}-submitted")
        refused = page.goto(hub.url(f"user/{student}/formgrader"))
        assert refused.status == 404, f"{student}'s server serves formgrader ({refused.status})"
        hub_ui.log_out(page, hub)
    _students_cannot_pry(course, socket_folder)
    for student in STUDENTS:
        _held_to_their_own_group(student)
    assert _idle_culler_runs(hub), "the hub's idle culler never read the users' activity"

    graded = _as_instructor(course, "python", "-m", "gradekit", "grade", "--collect", timeout=1200, check=False)
    (artifacts / "grade.log").write_text(graded.stdout + graded.stderr)
    internal_errors = course.course_dir / "class-report" / "internal-errors.log"
    if internal_errors.exists():
        shutil.copy(internal_errors, artifacts / "internal-errors.log")
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert "Warning" not in graded.stderr, graded.stderr[-3000:]  # progress lines only, no warning blocks
    scores = _scores(course.course_dir / "grades.csv")
    lost = sum(t.points for t in manifest.test_cells_of(control.notebook) if t.cell in control.fails)
    assert lost > 0 and scores[STUDENTS[0]] - scores[STUDENTS[1]] == lost, scores

    hub_ui.log_in(page, hub, TA, course.passwords[TA], screenshot)
    assert set(TEAM_ONLY) <= set(hub_ui.nbgrader_menu(page))
    formgrader = lab_ui.open_formgrader(page)
    open_the_waiting_submission(formgrader, ASSIGNMENT, WRITTEN, submissions=len(STUDENTS))
    score_written_answers(page, formgrader, TA_SCORES)
    screenshot(page, f"{TA}-graded-written-answers")
    hub_ui.log_out(page, hub)
    assert _entries_logged(course, socket_folder) == [
        f"{TA},{STUDENTS[0]},{WRITTEN},{cell},{score:g}" for cell, score in TA_SCORES.items()
    ]
    _as_instructor(course, "python", "-m", "gradekit", "grade", "--reports-only", timeout=600)
    refreshed = _scores(course.course_dir / "grades.csv")
    assert refreshed[STUDENTS[0]] == scores[STUDENTS[0]] + sum(TA_SCORES.values()), refreshed
    assert refreshed[STUDENTS[1]] == scores[STUDENTS[1]], refreshed
    _as_instructor(course, "nbgrader", "release_feedback", ASSIGNMENT)

    for student in STUDENTS:
        hub_ui.log_in(page, hub, student, course.passwords[student])
        lab_ui.open_assignments(page)
        hub_ui.fetch_feedback(page, ASSIGNMENT)
        screenshot(page, f"{student}-feedback")
        hub_ui.log_out(page, hub)
    _each_has_own_feedback(course, control)
    _students_cannot_pry(course, socket_folder)


def _as_instructor(course, *command: str, timeout: float = 300, check: bool = True):
    """A command the instructor types in a terminal of their server, in the course folder."""
    result = run_as(course, INSTRUCTOR, *command, cwd=course.course_dir, timeout=timeout)
    if check:
        assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
    return result


def _answer(course, student: str, answers: dict) -> None:
    """Write the student's answers into the fetched notebooks, as their own files (the typing is test_student_lab's)."""
    account = pwd.getpwnam(student)
    for notebook, sources in answers.items():
        path = course.home(student) / ASSIGNMENT / f"{notebook}.ipynb"
        nbformat.write(fill_answers(path, sources), path)
        os.chown(path, account.pw_uid, account.pw_gid)


def _held_to_their_own_group(student: str) -> None:
    """Each process of the student's (their server and its kernels) sits in their account's cgroup, with its limit."""
    pids = processes_of(pwd.getpwnam(student).pw_uid)
    assert pids, f"{student} runs nothing"
    for pid in pids:
        controllers = dict(line.split(":", 2)[1:] for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines())
        memory = controllers.get("memory") or controllers[""]
        assert memory.endswith(f"/{HUB_GROUP}/{student}"), (student, pid, memory)
    limit_file = "memory.limit_in_bytes" if "memory" in controllers else "memory.max"
    folder = Path("/sys/fs/cgroup") / ("memory" if "memory" in controllers else "") / memory.lstrip("/")
    assert int((folder / limit_file).read_text()) == StudentLimits().memory_bytes


def _idle_culler_runs(hub) -> bool:
    """The hub's idle-culler service has read the users' activity with its own scopes (the hub logs each call)."""
    return any(
        "200 GET /hub/api/users" in line and "(idle-culler@" in line
        for line in hub.log_path.read_text(errors="replace").splitlines()
    )


def _entries_logged(course, socket_folder: str) -> list[str]:
    """The gradebook's log of manual scores, as the instructor reads it with psql: who, whose, which cell, what."""
    query = "SELECT entered_by, student, notebook, cell, new_score FROM manual_grades_entered"
    read = run_as(course, INSTRUCTOR, "psql", "-h", socket_folder, "-d", GRADEBOOK_DATABASE, "-AtF,", "-c", query)
    assert read.returncode == 0, read.stderr
    return read.stdout.split()


def _students_cannot_pry(course, socket_folder: str) -> None:
    """Each student's uid is refused the other's submission, home and feedback, the course folder and the gradebook."""
    for student, other in (STUDENTS, STUDENTS[::-1]):
        attempts = {
            "list the exchange's inbound": ["ls", str(course.exchange / "inbound")],
            "list the exchange's feedback": ["ls", str(course.exchange / "feedback")],
            "read the other's submission": ["sh", "-c", f"cat {course.exchange / 'inbound'}/{other}+*/*.ipynb"],
            "list the other's home": ["ls", str(course.home(other))],
            "list the course folder": ["ls", str(course.course_dir)],
            "open the gradebook": ["psql", "-h", socket_folder, "-d", GRADEBOOK_DATABASE, "-Atc", "SELECT 1"],
            "open it as the TA": ["psql", "-h", socket_folder, "-U", TA, "-d", GRADEBOOK_DATABASE, "-Atc", "SELECT 1"],
            "list the course through the TA's link": ["ls", str(course.home(TA) / course.settings["course_id"])],
            "read the other's graded notebooks": ["ls", str(course.course_dir / "autograded" / other)],
        }
        for attempt, command in attempts.items():
            result = run_as(course, student, *command, timeout=30)
            assert result.returncode != 0 and not result.stdout, f"{student} could {attempt}: {result.stdout[:300]}"


def _scores(grades_csv) -> dict[str, float]:
    with open(grades_csv, newline="") as handle:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}


def _each_has_own_feedback(course, control) -> None:
    """The feedback in each student's home is the course's feedback for them, and only theirs."""
    received = {}
    for student in STUDENTS:
        pages = sorted((course.home(student) / ASSIGNMENT / "feedback").glob(f"*/{control.notebook}.html"))
        assert len(pages) == 1, (student, pages)
        own = course.course_dir / "feedback" / student / ASSIGNMENT / f"{control.notebook}.html"
        assert pages[0].read_bytes() == own.read_bytes(), f"{student} fetched feedback that is not theirs"
        received[student] = pages[0].read_text()
    # The lesson text names misconceptions too: only the misconceived answer adds a diagnosis of its own.
    diagnosis = f"[misconception: {control.misconception}]"
    assert received[STUDENTS[1]].count(diagnosis) > received[STUDENTS[0]].count(diagnosis), diagnosis
