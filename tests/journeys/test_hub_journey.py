"""The course on a real JupyterHub: deploy/ sets it up, three real accounts walk it in Chromium.

deploy/create_course.py makes the instructor and two students (real accounts,
own homes, PAM passwords), the exchange and the private course folder; the hub
runs deploy/jupyterhub_config.py as root on loopback. The instructor logs in
and releases `autograd`; each student logs in, fetches it in the Assignments
tab, answers (kit-student-a the reference, kit-student-b the reference with
one misconception) and submits; the instructor grades with the kit's command
and releases feedback; each student fetches their own feedback. Along the way,
each student's uid tries to read what belongs to the other or to the course.
Screenshots go to test-artifacts/hub/.
"""

import csv
import os
import pwd
import shutil

import nbformat
import pytest

from gradekit.authoring.solutions import load_controls
from gradekit.core.course import REPO_ROOT
from gradekit.core.manifest import load_manifest
from gradekit.proof.subjects import answer_sources, fill_answers
from journeys import hub_ui, lab_ui
from journeys.conftest import Screenshots
from journeys.hub import (
    INSTRUCTOR,
    STUDENTS,
    created_course,
    journey_artifacts,
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


@pytest.fixture
def artifacts():
    with journey_artifacts(ARTIFACTS) as folder:
        yield folder


@pytest.fixture
def hub_course(artifacts):
    require_hub_tools()
    with searchable_interpreter(), created_course(artifacts) as course, running_hub(course, artifacts) as hub:
        yield course, hub


def test_a_class_on_the_hub(hub_course, hub_page, artifacts):
    course, hub = hub_course
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

    answers = {
        STUDENTS[0]: {nb.name: answer_sources(manifest, nb.name, None) for nb in manifest.notebooks},
        STUDENTS[1]: {nb.name: answer_sources(manifest, nb.name, control) for nb in manifest.notebooks},
    }
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
    _students_cannot_pry(course)

    graded = _as_instructor(course, "python", "-m", "gradekit", "grade", "--collect", timeout=1200, check=False)
    (artifacts / "grade.log").write_text(graded.stdout + graded.stderr)
    internal_errors = course.course_dir / "class-report" / "internal-errors.log"
    if internal_errors.exists():
        shutil.copy(internal_errors, artifacts / "internal-errors.log")
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert "Warning" not in graded.stderr, graded.stderr[-3000:]  # progress lines only, no warning blocks
    _as_instructor(course, "nbgrader", "release_feedback", ASSIGNMENT)
    scores = _scores(course.course_dir / "grades.csv")
    lost = sum(t.points for t in manifest.test_cells_of(control.notebook) if t.cell in control.fails)
    assert lost > 0 and scores[STUDENTS[0]] - scores[STUDENTS[1]] == lost, scores

    for student in STUDENTS:
        hub_ui.log_in(page, hub, student, course.passwords[student])
        lab_ui.open_assignments(page)
        hub_ui.fetch_feedback(page, ASSIGNMENT)
        screenshot(page, f"{student}-feedback")
        hub_ui.log_out(page, hub)
    _each_has_own_feedback(course, control)
    _students_cannot_pry(course)


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


def _students_cannot_pry(course) -> None:
    """Each student's uid is refused the other's submission, home and feedback, the course folder and the gradebook."""
    for student, other in (STUDENTS, STUDENTS[::-1]):
        attempts = {
            "list the exchange's inbound": ["ls", str(course.exchange / "inbound")],
            "list the exchange's feedback": ["ls", str(course.exchange / "feedback")],
            "read the other's submission": ["sh", "-c", f"cat {course.exchange / 'inbound'}/{other}+*/*.ipynb"],
            "list the other's home": ["ls", str(course.home(other))],
            "list the course folder": ["ls", str(course.course_dir)],
            "read the gradebook": ["cat", str(course.course_dir / "gradebook.db")],
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
