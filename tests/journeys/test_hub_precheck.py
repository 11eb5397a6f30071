"""The sealed pre-check on a real JupyterHub: a student presses Pre-check in JupyterLab and reads the grader's answer.

deploy/create_course.py makes the accounts and the pre-check's own account with
its private copy of the course (its cooldown shortened here); the hub starts
the service. kit-student-a opens 010_history with a wrong answer, presses the
toolbar's Pre-check, reads the diagnosis beside the notebook, presses again at once and
meets the cooldown with that diagnosis still in sight, fixes the answer, waits the cooldown
out and sees every test cell pass, then presses Validate
with the panel still open (Pre-check and Validate stay on the toolbar beside it, at the
journey's window size and a laptop's). kit-student-b,
signed in as themselves, cannot read kit-student-a's result, nor send a request
in kit-student-a's name; a cell of kit-student-b's kernel pre-checks through the support module's
helper, with the hub token their server hands its kernels. Screenshots go to test-artifacts/hub-precheck/.
"""

import datetime
import json
import os
import pwd
import shutil
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from gradekit.authoring.solutions import load_controls
from gradekit.core.course import REPO_ROOT
from gradekit.core.due_words import due_line
from gradekit.core.manifest import load_manifest
from gradekit.proof.subjects import answer_sources, fill_answers
from journeys import hub_ui, lab_ui
from journeys.accessibility import blocking_violations
from journeys.conftest import Screenshots
from journeys.hub import (
    PRECHECK_ACCOUNT,
    STUDENTS,
    created_course,
    journey_artifacts,
    require_hub_tools,
    run_as,
    running_hub,
    searchable_interpreter,
)

pytestmark = pytest.mark.browser

NOTEBOOK = "010_history"
CONTROL = "010-float64_leaf__default_dtype"  # float32 where the page states float64
COOLDOWN_SECONDS = 40  # longer than grading the first check takes on a loaded machine (a few seconds quiet)
ARTIFACTS = REPO_ROOT / "test-artifacts" / "hub-precheck"
SERVICE_START_SECONDS = 300  # the service builds its grading template and warms a kernel first
RESULT_TIMEOUT_MS = 180_000
DUE = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=3, hours=1)).replace(microsecond=0)
LAPTOP_VIEWPORT = {"width": 1280, "height": 800}  # a typical laptop window, narrower than the journey's
TOOLBAR_SETTLE_MS = 1_500  # JupyterLab lays a toolbar out again at most every 500 ms after a resize
TOOLBAR_SETTLE_LIMIT_SECONDS = 15  # how long a loaded browser may take to do it
PRECHECK_BUTTON, VALIDATE_BUTTON = ".kit-precheck-button", ".validate-button"
ON_TOOLBAR = "on the toolbar"


@pytest.fixture
def artifacts():
    with journey_artifacts(ARTIFACTS) as folder:
        yield folder


@pytest.fixture
def hub_course(artifacts):
    require_hub_tools()
    with searchable_interpreter(), created_course(artifacts) as course:
        config = Path(course.precheck["course_dir"]) / "nbgrader_config.py"
        with open(config, "a") as handle:  # the course's own setting, shortened so the test can wait it out
            handle.write(f"\nc.Precheck.cooldown_seconds = {COOLDOWN_SECONDS}\n")
            handle.write(f"c.CourseKit.due_dates = {{'autograd': {DUE.isoformat()!r}}}\n")  # the panel says it
        with running_hub(course, artifacts) as hub:
            _wait_for_service(hub)
            yield course, hub


def test_a_student_prechecks_fixes_waits_out_the_cooldown_and_passes_and_nobody_else_reads_it(
    hub_course, hub_page, artifacts
):
    course, hub = hub_course
    page, screenshot = hub_page, Screenshots(artifacts)
    student, other = STUDENTS
    manifest = load_manifest()
    control = next(c for c in load_controls(manifest) if c.name == CONTROL)
    _service_runs_as_its_own_account()

    _write_notebook(course, student, answer_sources(manifest, NOTEBOOK, control))
    hub_ui.log_in(page, hub, student, course.passwords[student], screenshot)
    _open(page, hub, student)
    first = _precheck(page)
    screenshot(page, f"{student}-wrong-answer")
    assert first["state"] == "done", first["text"]
    assert f"This notebook is {due_line(DUE, datetime.datetime.now(datetime.timezone.utc))}." in first["text"]
    failing = _failed_cells(page)
    assert set(failing) == set(control.fails), first["text"]
    assert f"[misconception: {control.misconception}]" in failing[control.fails[0]], failing
    checked_at = time.monotonic()

    refused = _precheck(page)  # at once: the cooldown, counted from when the first was taken, is not over
    screenshot(page, f"{student}-cooldown")
    assert refused["state"] == "refused" and "again in" in refused["text"], refused["text"]
    # The cooldown is a line above the last answer, which stays: the student can still read what failed.
    assert refused["text"].startswith(f"Pre-check {NOTEBOOK}.ipynb again in "), refused["text"]
    assert f"Your last pre-check of {NOTEBOOK}.ipynb, at " in refused["text"], refused["text"]
    assert _failed_cells(page) == failing, refused["text"]
    assert page.locator("#kit-precheck-result").get_attribute("aria-live") == "polite"
    # The panel is the course's; JupyterLab's page around it is not the course's to fix.
    assert not (found := blocking_violations(page, "#kit-precheck-result")), "\n".join(found)
    _fold_panel(page)  # the next press opens it again

    _write_notebook(course, student, answer_sources(manifest, NOTEBOOK, None))  # the fix, saved as their file
    _open(page, hub, student)
    time.sleep(max(0.0, COOLDOWN_SECONDS + 1 - (time.monotonic() - checked_at)))
    passed = _precheck(page)
    screenshot(page, f"{student}-fixed")
    assert passed["state"] == "done" and _failed_cells(page) == {}, passed["text"]
    assert page.locator(".kit-precheck-cell").count() == len(manifest.test_cells_of(NOTEBOOK))
    assert not (found := blocking_violations(page, "#kit-precheck-result")), "\n".join(found)
    validated = _validate(page)  # the notebook the pre-check has just passed, as saved
    assert "visible checks passed" in validated and "Press Pre-check" in validated, validated
    assert "passes all the tests" not in validated, validated

    assert page.get_by_text("official Jupyter news").count() == 0  # the course turns that pop-up off
    checks = _audited_checks(course, student)
    assert len(checks) == 2  # the refused request was never taken
    hub_ui.log_out(page, hub)

    hub_ui.log_in(page, hub, other, course.passwords[other])
    theirs = _fetch_in_page(page, f"api/checks/{checks[0]}")
    assert theirs["status"] == 404 and "result" not in theirs["body"], theirs
    forged = _fetch_in_page(
        page,
        "api/checks",
        {"notebook": f"{NOTEBOOK}.ipynb", "student": student, "content": {"cells": []}, "nonce": "f" * 32},
    )
    assert forged["status"] == 403 and forged["body"]["error"] == "forged", forged
    unsigned = _fetch_in_page(page, "api/standing", token="")
    assert unsigned["status"] in (401, 403), unsigned

    # The fallback: a cell of kit-student-b's own kernel calls the support module's helper, with the
    # token and address their server hands its kernels.
    _write_notebook(course, other, answer_sources(manifest, NOTEBOOK, None))
    shutil.copy(REPO_ROOT / "release" / "autograd" / "autograd_checks.py", course.home(other))
    helper = run_as(
        course,
        other,
        sys.executable,
        "-c",
        f"import autograd_checks; autograd_checks.precheck({NOTEBOOK + '.ipynb'!r})",
        extra_env=_kernel_environment(other),
        timeout=300,
    )
    total = sum(cell.points for cell in manifest.test_cells_of(NOTEBOOK))
    assert f"Pre-check of {NOTEBOOK}.ipynb: {total:g} of {total:g} points" in helper.stdout, (
        helper.stdout + helper.stderr
    )
    hub_ui.log_out(page, hub)


def _kernel_environment(student: str) -> dict[str, str]:
    """The hub token and pre-check address that `student`'s running server hands every kernel it starts."""
    uid = pwd.getpwnam(student).pw_uid
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid or b"jupyterhub-singleuser" not in (entry / "cmdline").read_bytes():
                continue
            variables = dict(line.split("=", 1) for line in (entry / "environ").read_text().split("\0") if "=" in line)
        except OSError:
            continue
        return {name: variables[name] for name in ("JUPYTERHUB_API_TOKEN", "KIT_PRECHECK_URL")}
    raise AssertionError(f"{student} has no running server")


def _wait_for_service(hub) -> None:
    """Until the hub's proxy reaches the pre-check (it answers an unsigned request with 401)."""
    deadline = time.monotonic() + SERVICE_START_SECONDS
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(hub.url("services/precheck/api/standing"), timeout=5)
        except urllib.error.HTTPError as error:
            if error.code in (401, 403):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(1)
    raise AssertionError(f"the pre-check service did not answer within {SERVICE_START_SECONDS} s:\n{hub.log_tail()}")


def _service_runs_as_its_own_account() -> None:
    uid = pwd.getpwnam(PRECHECK_ACCOUNT).pw_uid
    owners = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
                if b"precheck-serve" in command:
                    owners.append(entry.stat().st_uid)
            except OSError:
                continue
    assert owners and set(owners) == {uid}, owners


def _write_notebook(course, student: str, sources: dict) -> None:
    """The student's 010_history, answered with `sources`, saved in their home as their own file.

    The release's support module lies beside it, as a fetch puts it, so that Validate can run it.
    """
    release = REPO_ROOT / "release" / "autograd"
    path = course.home(student) / f"{NOTEBOOK}.ipynb"
    nbformat.write(fill_answers(release / f"{NOTEBOOK}.ipynb", sources), path)
    support = shutil.copy(release / "autograd_checks.py", course.home(student))
    account = pwd.getpwnam(student)
    for written in (path, support):
        os.chown(written, account.pw_uid, account.pw_gid)


def _open(page, hub, student: str) -> None:
    page.goto(hub.url(f"user/{student}/lab/tree/{NOTEBOOK}.ipynb"))
    lab_ui.notebook(page).wait_for(timeout=hub_ui.SPAWN_TIMEOUT_MS)
    page.locator(PRECHECK_BUTTON).first.wait_for(timeout=lab_ui.STEP_TIMEOUT_MS)


def _validate(page) -> str:
    """nbgrader's Validate, pressed with the Pre-check panel open beside the notebook.

    At the journey's window size and at a laptop's, Pre-check and Validate are both on the notebook's
    toolbar, in sight and not covered, rather than folded into its overflow menu; Validate is pressed
    at the laptop's size. Returns the dialog's text, its success line as the course's lab button rewords it.
    """
    journey_viewport = page.viewport_size
    for viewport in (journey_viewport, LAPTOP_VIEWPORT):
        _resize(page, viewport)
        for button in (PRECHECK_BUTTON, VALIDATE_BUTTON):
            where = _settled_place(page, button)
            assert where == ON_TOOLBAR, f"{button} at {viewport['width']} px wide: {where}"
    lab_ui.notebook(page).get_by_role("button", name="Validate").click()
    verdict = ".jp-Dialog .kit-validate-honest, .jp-Dialog .validation-failed, .jp-Dialog .validation-changed"
    page.locator(verdict).first.wait_for(timeout=lab_ui.KERNEL_TIMEOUT_MS)
    text = page.locator(".jp-Dialog").inner_text()
    lab_ui.close_dialog(page)
    assert page.locator("#kit-precheck-result").is_visible()  # Validate left the panel open
    _resize(page, journey_viewport)
    return text


def _resize(page, viewport: dict) -> None:
    if page.viewport_size != viewport:
        page.set_viewport_size(viewport)
        page.wait_for_timeout(TOOLBAR_SETTLE_MS)


def _settled_place(page, button: str) -> str:
    """Where `button` is once the toolbar has been laid out again: asked until it is on it, for a while.

    A starved browser may still be laying the toolbar out when it is first asked.
    """
    deadline = time.monotonic() + TOOLBAR_SETTLE_LIMIT_SECONDS
    while (where := _where_on_toolbar(page, button)) != ON_TOOLBAR and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    return where


def _where_on_toolbar(page, button: str) -> str:
    """ON_TOOLBAR when `button` is on the front notebook's toolbar, in sight and on top, beside the open panel.

    Otherwise what is wrong: JupyterLab's toolbar moves the items that do not fit into an overflow
    menu, a pop-up of its own outside the notebook.
    """
    return page.evaluate(
        """([button, onToolbar]) => {
            const panel = document.getElementById('kit-precheck-result');
            if (!panel || panel.offsetParent === null) { return 'the Pre-check panel is not open'; }
            const notebook = [...document.querySelectorAll('.jp-NotebookPanel')].find(n => n.offsetParent !== null);
            const item = notebook.querySelector('.jp-NotebookPanel-toolbar ' + button);
            if (!item) {
                const folded = document.querySelector('.jp-Toolbar-responsive-popup ' + button);
                return folded ? "folded into the toolbar's overflow menu" : 'not on the page';
            }
            if (panel.getBoundingClientRect().left < notebook.getBoundingClientRect().right) {
                return 'the Pre-check panel is not beside the notebook';
            }
            const box = item.getBoundingClientRect();
            if (box.width === 0 || box.height === 0) { return 'not shown'; }
            const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
            return item.contains(hit) ? onToolbar : `covered by ${hit ? hit.className : 'nothing'}`;
        }""",
        [button, ON_TOOLBAR],
    )


def _fold_panel(page) -> None:
    """Click the Pre-check tab at the window's right edge, as a student folds the sidebar away."""
    page.locator(".jp-SideBar.jp-mod-right .lm-TabBar-tab", has_text="Pre-check").click()
    page.locator("#kit-precheck-result").wait_for(state="hidden", timeout=lab_ui.STEP_TIMEOUT_MS)


def _precheck(page) -> dict:
    """Press the notebook's Pre-check button; wait for the side panel's answer: its state and text.

    An answer already in the panel is marked first, so that only the one this press brings is waited for.
    """
    page.evaluate(
        "document.querySelectorAll('#kit-precheck-result .kit-precheck-headline')"
        ".forEach(line => line.setAttribute('data-earlier', ''))"
    )
    page.locator(f".jp-NotebookPanel:visible {PRECHECK_BUTTON}").first.click()
    headline = page.locator("#kit-precheck-result .kit-precheck-headline:not([data-earlier])")
    page.locator(
        "#kit-precheck-result .kit-precheck-headline:not([data-earlier])[data-state='done'], "
        "#kit-precheck-result .kit-precheck-headline:not([data-earlier])[data-state='refused']"
    ).wait_for(timeout=RESULT_TIMEOUT_MS)
    return {
        "state": headline.get_attribute("data-state"),
        "text": page.locator("#kit-precheck-result").inner_text(),
    }


def _failed_cells(page) -> dict[str, str]:
    cells = page.locator("#kit-precheck-result .kit-precheck-cell[data-passed='false']")
    return {cells.nth(i).get_attribute("data-cell"): cells.nth(i).inner_text() for i in range(cells.count())}


def _audited_checks(course, student: str) -> list[str]:
    audit = Path(course.precheck["state_dir"]) / "audit.jsonl"
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    return [line["check"] for line in lines if line["student"] == student and line["event"] == "taken"]


def _fetch_in_page(page, path: str, body: dict | None = None, token: str | None = None) -> dict:
    """A request from the signed-in student's own JupyterLab page, with that page's hub token (or `token`)."""
    return page.evaluate(
        """async ([path, body, token]) => {
            const config = JSON.parse(document.getElementById('jupyter-config-data').textContent);
            const headers = {'Content-Type': 'application/json'};
            const given = token === null ? config.token : token;
            if (given) { headers.Authorization = `token ${given}`; }
            if (body) { body.sent = Date.now() / 1000; }
            const response = await fetch('/services/precheck/' + path, {
                method: body ? 'POST' : 'GET', headers, body: body ? JSON.stringify(body) : undefined,
                credentials: 'omit'});
            let parsed = {};
            try { parsed = await response.json(); } catch (e) {}
            return {status: response.status, body: parsed};
        }""",
        [path, body, token],
    )
