"""The suite's timing figure: tiers summed, the least wall time on the cores, the slowest tests first."""

from pathlib import Path

import pytest
from durations_figures import SLOWEST, DurationsFigure, TimedTest, cpu_seconds, render

pytestmark = pytest.mark.unit

TIERS = ("unit", "nbgrader")


def _times():
    return [
        TimedTest("tests/test_a.py::test_quick", "unit", 2.0, 1.5),
        TimedTest("tests/test_b.py::test_grades", "nbgrader", 200.0, 500.0),
        TimedTest("tests/test_c.py::test_waits", "nbgrader", 100.0, 20.0),
    ]


def test_each_tier_sums_its_own_tests_and_the_total_sums_them_all():
    figure = render(_times(), TIERS, 2, 1.5, Path("figure.md"))
    assert "| unit | 1 | 2 s | 2 s | 0.75 |" in figure
    assert "| nbgrader | 2 | 5.0 min | 8.7 min | 1.73 |" in figure
    assert "| **all** | 3 | 5.0 min | 8.7 min | 1.73 |" in figure
    assert figure.startswith("<!-- written by: python -m pytest --durations-figures figure.md -->")


def test_the_least_wall_time_is_half_the_cpu_on_two_cores_unless_one_test_is_longer():
    assert "**4.3 min**" in render(_times(), TIERS, 2, 0.0, Path("f.md"))  # 521.5 CPU s over 2 cores
    assert "**3.3 min**" in render(_times(), TIERS, 4, 0.0, Path("f.md"))  # the 200 s test
    assert "| 200.0 s | 500.0 s | nbgrader | `tests/test_b.py::test_grades` |" in render(
        _times(), TIERS, 2, 0.0, Path("f")
    )


def test_the_slowest_tests_come_first_and_stop_at_the_limit():
    many = [TimedTest(f"t::{n}", "unit", float(n), 0.0) for n in range(SLOWEST + 5)]
    figure = render(many, TIERS, 2, 0.0, Path("f.md"))
    rows = [line for line in figure.splitlines() if line.startswith("| ") and "`t::" in line]
    assert len(rows) == SLOWEST
    assert rows[0].endswith(f"`t::{SLOWEST + 4}` |") and rows[-1].endswith("`t::5` |")


def test_cpu_seconds_count_work_done_in_this_process():
    before = cpu_seconds()
    sum(n * n for n in range(2_000_000))
    assert cpu_seconds() > before


class _Item:
    """What the plugin reads of a test: its id and its marks."""

    def __init__(self, nodeid, tier):
        self.nodeid, self.mark = nodeid, pytest.mark.__getattr__(tier).mark

    def iter_markers(self):
        return iter([self.mark])


def _run(plugin, item):
    """The protocol hook as pytest drives a wrapper: up to its yield, then the test's outcome sent in."""
    step = plugin.pytest_runtest_protocol(item, None)
    next(step)
    with pytest.raises(StopIteration):
        step.send(True)


def test_the_plugin_times_each_test_under_its_tier_and_writes_the_figure_at_the_end(tmp_path):
    figure = tmp_path / "figures" / "durations.md"
    plugin = DurationsFigure(figure, TIERS)
    _run(plugin, _Item("tests/test_x.py::test_one", "nbgrader"))
    _run(plugin, _Item("tests/test_y.py::test_two", "unit"))
    assert not figure.exists()
    plugin.pytest_sessionfinish(None)
    text = figure.read_text()
    assert "2 tests in" in text and "| nbgrader | 1 |" in text and "| unit | 1 |" in text
    assert "`tests/test_x.py::test_one`" in text and "`tests/test_y.py::test_two`" in text


def test_the_figure_names_pytest_as_the_command_that_wrote_it_where_the_docs_expect_it():
    from test_figures import HEADER

    first = render(_times(), TIERS, 2, 0.0, Path("docs/pages/figures/test-durations.md")).splitlines()[0]
    match = HEADER.match(first)
    assert match and match.group(2) == "docs/pages/figures/test-durations.md"
