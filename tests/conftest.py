"""Shared fixtures: the course, its manifest, one real proof run per test session, and the kit's logger."""

import logging
import sys
from pathlib import Path

import parallel_groups
import pytest

from gradekit.core import log
from gradekit.core.cores import default_jobs
from gradekit.core.course import load_course
from gradekit.core.manifest import load_manifest
from gradekit.proof.rules import run_proof


@pytest.fixture(scope="session", autouse=True)
def gradebook_schema_read_once():
    """Every new gradebook of a test takes its schema's version from one in-process read, as the kit's own do."""
    import nbgrader.api

    from gradekit.core.nbgrader_in_process import schema_version

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nbgrader.api, "get_alembic_version", schema_version)
        yield


@pytest.fixture(scope="session")
def course():
    return load_course()


@pytest.fixture(scope="session")
def manifest():
    return load_manifest()


@pytest.fixture(scope="session")
def proof(course, manifest, tmp_path_factory):
    """The TA's grading engine: generate the release, grade the reference, the blank stubs and every control."""
    return run_proof(course, manifest, tmp_path_factory.mktemp("proof"), jobs=default_jobs())


@pytest.fixture(scope="session")
def small_cohort(course, manifest, tmp_path_factory):
    """010_history graded for a handful of students, broken and cheating ones among them (cohort_fixtures.py)."""
    from cohort_fixtures import small_cohort

    return small_cohort(course, manifest, tmp_path_factory.mktemp("small-cohort"))


@pytest.fixture(scope="session")
def checked_in_process(course, manifest):
    """`gradekit check` over the whole course: every subject's checks run in this process."""
    from gradekit.proof.check_course import check_course

    return check_course(course, manifest)


@pytest.fixture
def kit_logger():
    logger = logging.getLogger(log.KIT_LOGGER)
    handlers, level = list(logger.handlers), logger.level
    yield logger
    logger.handlers[:], logger.level = handlers, level


def load_checks_module():
    """The notebooks' check helpers, loaded from source/ without touching sys.path."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "source" / "autograd" / "autograd_checks.py"
    spec = importlib.util.spec_from_file_location("autograd_checks_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TIERS = ("unit", "notebook", "nbgrader", "browser", "cluster")


def pytest_addoption(parser):
    parser.addoption(
        "--durations-figures",
        metavar="PATH",
        help="write each tier's wall and CPU time and the slowest tests to PATH (Markdown, durations_figures.py)",
    )
    parser.addoption(
        "--durations-after",
        action="store_true",
        help="this is the run's second pass: the figure at --durations-figures adds this pass to what the first recorded",
    )


def pytest_configure(config):
    figure = config.getoption("--durations-figures")
    if figure:
        from durations_figures import DurationsFigure, PhaseClock, Recorded, record_path, reference_seconds

        # Tests run where the clock is (a worker under pytest-xdist); the figure is written where reports arrive.
        config.pluginmanager.register(PhaseClock(), "durations-phase-clock")
        if not hasattr(config, "workerinput"):
            workers = getattr(config.option, "numprocesses", None) or 0
            earlier = Recorded.read(record_path(Path(figure))) if config.getoption("--durations-after") else None
            plugin = DurationsFigure(Path(figure), TIERS, workers, earlier, reference_seconds())
            config.pluginmanager.register(plugin, "durations-figures")


def pytest_collection_modifyitems(config, items):
    """Every test carries exactly one tier (pytest.ini describes them), so no test escapes `make check`'s choice."""
    wrong = []
    for item in items:
        tiers = sorted({mark.name for mark in item.iter_markers() if mark.name in TIERS})
        if len(tiers) != 1:
            wrong.append(f"  {item.nodeid}: {', '.join(tiers) or 'no tier'}")
    if wrong:
        raise pytest.UsageError(
            "each test needs exactly one tier marker of " + ", ".join(TIERS) + ":\n" + "\n".join(wrong)
        )
    _group_for_workers(items)


def _group_for_workers(items):
    """The suite's order for its workers: group by group, heaviest first (parallel_groups.py), Playwright's tests
    last in theirs. A module asking for a shared session fixture outside its group is refused.

    Playwright's synchronous driver holds a running event loop on the main thread while its module
    runs, where asyncio.run() refuses to start: a module's other tests run before it starts.
    """
    wrong = parallel_groups.unlisted_sharers((item.nodeid, getattr(item, "fixturenames", ())) for item in items)
    if wrong:
        raise pytest.UsageError("a costly session fixture is built once per group:\n  " + "\n  ".join(wrong))
    tiers = ((item.nodeid, _tier(item)) for item in items)
    weights = parallel_groups.group_weights(tiers, parallel_groups.measured_seconds())
    order: dict[str, int] = {}
    for item in items:
        order.setdefault(parallel_groups.group_of(item.nodeid), len(order))

    def place(item):
        group = parallel_groups.group_of(item.nodeid)
        return -weights[group], order[group], "playwright" in getattr(item, "fixturenames", ())

    items.sort(key=place)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without xdist, pytest need not know it
def pytest_xdist_make_scheduler(config, log):
    """Workers take whole groups of tests (parallel_groups.py)."""
    return parallel_groups.group_scheduling(config, log)


def _tier(item) -> str:
    return next(mark.name for mark in item.iter_markers() if mark.name in TIERS)


class ProcessWatch:
    """Notes, while a unit test runs, every process it starts (Python's audit events), so the unit tier stays in-process."""

    EVENTS = frozenset(
        {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system"}
    )

    def __init__(self):
        self.watching = False
        self.started: list[str] = []
        sys.addaudithook(self._heard)

    def _heard(self, event, args):
        if self.watching and event in self.EVENTS:
            self.started.append(" ".join([event, *map(str, args[:2])])[:200])


PROCESSES = ProcessWatch()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A unit test that started a process fails, naming what it started: it belongs to another tier (pytest.ini)."""
    if item.get_closest_marker("unit") is None:
        return (yield)
    PROCESSES.watching, PROCESSES.started = True, []
    try:
        result = yield
    finally:
        PROCESSES.watching = False
    if PROCESSES.started:
        pytest.fail(
            "a unit test starts no process; mark it for the tier it belongs to:\n  " + "\n  ".join(PROCESSES.started)
        )
    return result
