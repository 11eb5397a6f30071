"""Fixtures of the journey tests: a headless Chromium, offline pages, screenshots, JupyterLab servers.

The browser is Debian's chromium driven by Playwright. When either is missing
the tests fail (CI installs both): a journey that was not walked is not a pass.
Every page is offline: a request for any address but the loopback server is
refused and recorded, and a test during which any page asked for one fails
(MathJax, for one, must come from the server's jupyter-server-mathjax).
Screenshots and server logs are kept under test-artifacts/journeys/<test>/.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
from pathlib import Path

import pytest

from gradekit.authoring.release import clone_workspace, new_workspace
from gradekit.core.course import REPO_ROOT
from journeys.lab_server import LOOPBACK, running_lab

HISTORY = "010_history"
ARTIFACTS = REPO_ROOT / "test-artifacts" / "journeys"
CHROMIUM = os.environ.get("KIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture(scope="session")
def history_release(course, tmp_path_factory):
    """A scratch course holding only 010_history, its release generated once by nbgrader for the session."""
    return new_workspace(course, tmp_path_factory.mktemp("history") / "course", (HISTORY,))


@pytest.fixture
def history_course(history_release, tmp_path):
    """This test's own copy of the 010_history scratch course (source, release and gradebook)."""
    return clone_workspace(history_release, tmp_path / "course")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so fixtures can screenshot a failure."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="module")
def playwright():
    """Playwright for one module: while its synchronous driver runs, the process's main thread holds its event
    loop (asyncio.run() refuses to start), so it stops when the module ends and the worker's next module may."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the journey tests need Playwright: pip install playwright (no `playwright install`)")
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"the journey tests need Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright, tmp_path_factory):
    """One headless Chromium for the module, with a fresh profile."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    context = playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        args=CHROMIUM_ARGS,
        headless=True,
        viewport=VIEWPORT,
    )
    context.set_default_timeout(30_000)
    # A regular expression is matched inside the browser; a Python predicate would hold every
    # request until the test's thread next talks to Playwright.
    context.off_machine_requests = []
    context.route(
        re.compile(rf"^(?!http://{re.escape(LOOPBACK)}:)"), functools.partial(_refuse, context.off_machine_requests)
    )
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="module")
def file_browser(playwright):
    """A headless Chromium for the module that opens pages from disk (the journeys' browser lets only loopback
    through). Each `new_page()` of it opens in a context of its own, so no test sees another's page or storage;
    one browser per module spares each test a browser's start (about two seconds of CPU)."""
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        yield chromium
    finally:
        chromium.close()


def _refuse(refused: list[str], route) -> None:
    refused.append(route.request.url)
    route.abort()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A browser test fails when any page asked for an address off the machine while it ran.

    Refusing alone would hide it: a page often carries on without what it asked for.
    """
    context = item.funcargs.get("browser")
    if context is None:
        return (yield)
    context.off_machine_requests.clear()
    outcome = yield
    context.cookies()  # a round trip to the browser, so every refusal still queued is recorded
    assert context.off_machine_requests == [], (
        f"pages asked for addresses off the machine: {context.off_machine_requests}"
    )
    return outcome


class Screenshots:
    """Numbered screenshots of one test, in test-artifacts/journeys/<test>/."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.taken: list[Path] = []

    def __call__(self, page, step: str) -> Path:
        path = self.folder / f"{len(self.taken) + 1:02d}-{step}.png"
        page.screenshot(path=str(path))
        self.taken.append(path)
        return path


@pytest.fixture
def artifacts(request) -> Path:
    """This test's artifact folder, emptied first."""
    folder = ARTIFACTS / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@contextlib.contextmanager
def _tab_kept_on_failure(browser, artifacts: Path, request):
    """A new tab; when the test fails its last state is saved as failure.png."""
    tab = browser.new_page()
    yield tab
    failed = getattr(request.node, "report_call", None)
    if failed is not None and failed.failed:
        tab.screenshot(path=str(artifacts / "failure.png"))
    tab.close()


@pytest.fixture
def page(browser, artifacts, lab_for, request):
    """A tab for a JupyterLab of the test, saved on failure before any server of the test stops."""
    with _tab_kept_on_failure(browser, artifacts, request) as tab:
        errors: list[str] = []
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.page_errors = errors
        yield tab


@pytest.fixture
def hub_page(browser, artifacts, request):
    """A tab for a hub journey (the hub's module gives `artifacts`), saved on failure before the hub stops."""
    with _tab_kept_on_failure(browser, artifacts, request) as tab:
        yield tab


@pytest.fixture
def screenshot(artifacts) -> Screenshots:
    return Screenshots(artifacts)


@pytest.fixture
def lab_for(artifacts):
    """Start JupyterLab in a folder with an environment; stopped at teardown, its log kept as an artifact."""
    with contextlib.ExitStack() as servers:

        def start(root: Path, env: dict[str, str]):
            state = artifacts / "server"
            state.mkdir(exist_ok=False)  # one server per test
            return servers.enter_context(running_lab(root, env, state))

        yield start
