"""The suite's timing figure: tiers summed, the least wall time on the cores, the slowest tests first."""

import gc
import json
import os
import re
from pathlib import Path

import pytest
from durations_figures import (
    CPU_STAMP,
    SLOWEST,
    DurationsFigure,
    PhaseClock,
    Recorded,
    SuiteRun,
    TimedTest,
    best_round,
    cpu_seconds,
    machine_busy_seconds,
    record_path,
    reference_seconds,
    render,
)

TIERS = ("unit", "nbgrader")
ALONE = [SuiteRun(0, 330.0)]


def _times():
    return [
        TimedTest("tests/test_a.py::test_quick", "unit", 2.0, 1.5),
        TimedTest("tests/test_b.py::test_grades", "nbgrader", 200.0, 500.0),
        TimedTest("tests/test_c.py::test_waits", "nbgrader", 100.0, 20.0),
    ]


@pytest.mark.unit
def test_each_tier_sums_its_own_tests_and_the_total_sums_them_all():
    figure = render(_times(), TIERS, 2, 1.5, Path("figure.md"), ALONE)
    assert "| unit | 1 | 2 s | 2 s | 0.75 |" in figure
    assert "| nbgrader | 2 | 5.0 min | 8.7 min | 1.73 |" in figure
    assert "| **all** | 3 | 5.0 min | 8.7 min | 1.73 |" in figure
    assert figure.startswith("<!-- written by: python -m pytest --durations-figures figure.md -->")


@pytest.mark.unit
def test_the_least_wall_time_is_half_the_cpu_on_two_cores_unless_one_test_is_longer():
    assert "**4.3 min**" in render(_times(), TIERS, 2, 0.0, Path("f.md"), ALONE)  # 521.5 CPU s over 2 cores
    assert "**3.3 min**" in render(_times(), TIERS, 4, 0.0, Path("f.md"), ALONE)  # the 200 s test
    assert "| 200.0 s | 500.0 s | nbgrader | `tests/test_b.py::test_grades` |" in render(
        _times(), TIERS, 2, 0.0, Path("f"), ALONE
    )


@pytest.mark.unit
def test_the_slowest_tests_come_first_and_stop_at_the_limit():
    many = [TimedTest(f"t::{n}", "unit", float(n), 0.0) for n in range(SLOWEST + 5)]
    figure = render(many, TIERS, 2, 0.0, Path("f.md"), ALONE)
    rows = [line for line in figure.splitlines() if line.startswith("| ") and "`t::" in line]
    assert len(rows) == SLOWEST
    assert rows[0].endswith(f"`t::{SLOWEST + 4}` |") and rows[-1].endswith("`t::5` |")


@pytest.mark.unit
def test_cpu_seconds_count_work_done_in_this_process():
    before = cpu_seconds()
    sum(n * n for n in range(2_000_000))
    assert cpu_seconds() > before


class _Item:
    """What the phase clock reads of a test: its user properties."""

    def __init__(self):
        self.user_properties = []


class _Report:
    """What the figure reads of a phase's report, as pytest (or pytest-xdist, from a worker) hands it over."""

    def __init__(self, nodeid, tier, when, duration, cpu_stamps=()):
        self.nodeid, self.when, self.duration = nodeid, when, duration
        self.keywords = {tier: 1, nodeid.split("::")[-1]: 1}
        self.user_properties = [(CPU_STAMP, cpu) for cpu in cpu_stamps] + [("other", 9.0)]


def _phases(plugin, nodeid, tier, walls, cpus):
    for when, wall, stamps in zip(("setup", "call", "teardown"), walls, (cpus[:1], cpus[:2], cpus)):
        plugin.pytest_runtest_logreport(_Report(nodeid, tier, when, wall, stamps))


@pytest.mark.unit
def test_the_phase_clock_stamps_each_phases_cpu_on_the_item_even_when_the_phase_fails():
    clock, item = PhaseClock(), _Item()
    for phase in (clock.pytest_runtest_setup(item), clock.pytest_runtest_call(item)):
        next(phase)
        with pytest.raises(StopIteration):
            phase.send(None)
    teardown = clock.pytest_runtest_teardown(item, None)
    next(teardown)
    with pytest.raises(RuntimeError):
        teardown.throw(RuntimeError("teardown failed"))
    assert [name for name, _ in item.user_properties] == [CPU_STAMP] * 3
    assert all(seconds >= 0 for _, seconds in item.user_properties)


@pytest.mark.unit
def test_the_figure_adds_each_tests_phases_under_its_tier_and_writes_at_the_end(tmp_path):
    figure = tmp_path / "figures" / "durations.md"
    plugin = DurationsFigure(figure, TIERS, workers=2)
    _phases(plugin, "tests/test_x.py::test_one", "nbgrader", (100.0, 20.0, 3.0), (80.0, 30.0, 4.0))
    _phases(plugin, "tests/test_y.py::test_two", "unit", (0.0, 1.0, 0.0), (0.0, 0.5, 0.0))
    assert [(t.nodeid, t.tier, t.wall, t.cpu) for t in plugin.times] == [
        ("tests/test_x.py::test_one", "nbgrader", 123.0, 114.0),
        ("tests/test_y.py::test_two", "unit", 1.0, 0.5),
    ]
    assert not figure.exists()
    plugin.pytest_sessionfinish(None)
    text = figure.read_text()
    assert "2 tests in" in text and "| nbgrader | 1 | 2.0 min | 114 s |" in text and "| unit | 1 |" in text
    assert "on 2 workers side by side" in text and "`tests/test_x.py::test_one`" in text
    modules = json.loads(record_path(figure).read_text())["wall seconds by test module"]
    assert modules == {"tests/test_x.py": 123.0, "tests/test_y.py": 1.0}


@pytest.mark.unit
def test_a_second_pass_adds_its_tests_to_what_the_first_recorded_and_says_both_passes(tmp_path):
    figure = tmp_path / "durations.md"
    first = DurationsFigure(figure, TIERS, workers=2)
    _phases(first, "tests/test_x.py::test_one", "nbgrader", (10.0, 20.0, 3.0), (5.0, 6.0, 7.0))
    first.pytest_sessionfinish(None)
    second = DurationsFigure(figure, TIERS, workers=0, earlier=Recorded.read(record_path(figure)))
    _phases(second, "tests/test_z.py::test_alone", "nbgrader", (1.0, 50.0, 1.0), (0.0, 40.0, 0.0))
    second.pytest_sessionfinish(None)
    text = figure.read_text()
    assert "2 tests in" in text and "| nbgrader | 2 | 85 s | 58 s |" in text
    # Then "." or, when the machine's cores did work meanwhile (a loaded machine), "; the machine's cores...".
    assert re.search(r"on 2 workers side by side, then [^,;]*? in one process[.;]", text)
    assert [t.nodeid for t in Recorded.read(record_path(figure)).times] == [
        "tests/test_x.py::test_one",
        "tests/test_z.py::test_alone",
    ]


@pytest.mark.unit
def test_a_second_pass_without_a_first_ones_record_is_refused(tmp_path):
    with pytest.raises(pytest.UsageError, match="no earlier pass recorded"):
        Recorded.read(tmp_path / "durations.json")


@pytest.mark.unit
def test_the_machines_busy_seconds_grow_with_work_done():
    before = machine_busy_seconds()
    sum(n * n for n in range(3_000_000))
    assert machine_busy_seconds() > before > 0


@pytest.mark.unit
def test_the_run_says_how_long_it_took_and_on_how_many_workers():
    assert "took **5.5 min** from start to end, in one process" in render(_times(), TIERS, 2, 0.0, Path("f"), ALONE)
    parallel = render(_times(), TIERS, 2, 0.0, Path("f"), [SuiteRun(2, 90.0)])
    assert "took **90 s** from start to end, on 2 workers side by side." in parallel
    busy = render(_times(), TIERS, 2, 0.0, Path("f"), [SuiteRun(2, 600.0, 900.0), SuiteRun(0, 60.0, 40.0)])
    assert "took **11.0 min** from start to end: 10.0 min on 2 workers side by side, then 60 s in one process;" in busy
    assert "busy for 15.7 min of the 22.0 min they had (71%, servers and all)." in busy
    slowed = render(_times(), TIERS, 2, 0.0, Path("f"), [SuiteRun(2, 600.0, 900.0, 66.0), SuiteRun(0, 60.0, 40.0)])
    assert "(71%, servers and all), and the host of this virtual machine gave 66 s of them to others (5%" in slowed


@pytest.mark.unit
def test_the_reference_work_counts_the_fewest_cpu_seconds_of_its_rounds_with_the_collector_put_back(monkeypatch):
    import durations_figures

    readings = iter([0.0, 5.0, 10.0, 12.0, 20.0, 27.0])  # rounds of 5, 2 and 7 s
    done = []
    monkeypatch.setattr(durations_figures, "_reference_work", lambda: done.append(gc.isenabled()))
    monkeypatch.setattr(durations_figures.time, "process_time", lambda: next(readings))
    assert gc.isenabled()
    assert best_round(3) == 2.0
    assert done == [False] * 4 and gc.isenabled()  # an untimed first round, then three, none collecting


@pytest.mark.nbgrader  # it forks a process per core
def test_the_reference_is_the_mean_of_every_core_doing_the_work_at_once(monkeypatch):
    import durations_figures

    parent = os.getpid()
    # Each core's process answers its rounds plus 1 if it is not the parent, the parent nothing.
    monkeypatch.setattr(durations_figures, "best_round", lambda rounds: rounds + float(os.getpid() != parent))
    assert reference_seconds(3, cores=4) == 4.0
    assert os.getpid() == parent


@pytest.mark.nbgrader  # it forks a process per core
def test_a_core_whose_work_fails_ends_its_process_and_the_parent_says_so(monkeypatch):
    import durations_figures

    parent = os.getpid()

    def failing(rounds):
        raise RuntimeError("the reference work failed")

    monkeypatch.setattr(durations_figures, "best_round", failing)
    with pytest.raises(ValueError):  # nothing answered
        reference_seconds(3, cores=2)
    assert os.getpid() == parent


@pytest.mark.unit
def test_the_figure_says_how_long_the_reference_work_took_as_each_pass_began():
    passes = [SuiteRun(2, 600.0, 900.0, 0.0, 0.17), SuiteRun(0, 60.0, 40.0, 0.0, 0.2)]
    figure = render(_times(), TIERS, 2, 0.0, Path("f"), passes)
    assert "(`reference_seconds`, best of 3) took 0.170 s and 0.200 s of CPU as each pass began" in figure
    assert "reference_seconds" not in render(_times(), TIERS, 2, 0.0, Path("f"), ALONE)


@pytest.mark.unit
def test_a_record_written_before_the_reference_was_timed_still_reads(tmp_path):
    path = tmp_path / "figure.json"
    path.write_text(json.dumps({"tests": [], "loads": [], "passes": [[3, 847.6, 1658.3, 1.9]]}))
    assert Recorded.read(path).passes == [SuiteRun(3, 847.6, 1658.3, 1.9, 0.0)]


@pytest.mark.unit
def test_the_figure_names_pytest_as_the_command_that_wrote_it_where_the_docs_expect_it():
    from test_figures import HEADER

    first = render(_times(), TIERS, 2, 0.0, Path("docs/pages/figures/test-durations.md"), ALONE).splitlines()[0]
    match = HEADER.match(first)
    assert match and match.group(2) == "docs/pages/figures/test-durations.md"
