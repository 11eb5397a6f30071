"""The suite's worker groups: a module by default, shared costly fixtures and the hub together, heaviest first."""

import pytest
from parallel_groups import TIER_SECONDS, group_of_modules, group_weights, measured_seconds

pytestmark = pytest.mark.unit

TESTS = [
    ("tests/test_a.py::test_one", ("tmp_path",)),
    ("tests/test_a.py::test_two", ("proof", "tmp_path")),
    ("tests/test_b.py::test_one", ("checked_in_process",)),
    ("tests/test_c.py::test_one", ()),
    ("tests/test_d.py::test_one[x]", ("small_cohort",)),
    ("tests/journeys/test_hub_journey.py::test_one", ("playwright",)),
    ("tests/test_student_limits.py::test_one", ()),
]


def test_a_module_is_its_own_group_unless_it_shares_a_costly_fixture_or_the_hub():
    assert group_of_modules(TESTS) == {
        "tests/test_a.py": "proof",  # one of its tests asks for the proof: the whole module goes with it
        "tests/test_b.py": "proof",
        "tests/test_c.py": "tests/test_c.py",
        "tests/test_d.py": "small-cohort",
        "tests/journeys/test_hub_journey.py": "hub",
        "tests/test_student_limits.py": "hub",
    }


def test_a_group_weighs_its_modules_measured_seconds_or_else_its_tests_tier_means():
    groups = group_of_modules(TESTS)
    tiers = [("tests/test_a.py::test_one", "unit"), ("tests/test_a.py::test_two", "nbgrader")]
    tiers += [("tests/test_b.py::test_one", "notebook"), ("tests/test_c.py::test_one", "unit")]
    weights = group_weights(tiers, groups, {"tests/test_a.py": 150.0, "tests/test_gone.py": 9.0})
    assert weights["proof"] == pytest.approx(150.0 + TIER_SECONDS["notebook"])
    assert weights["tests/test_c.py"] == pytest.approx(TIER_SECONDS["unit"])
    assert weights["hub"] == 0.0  # a group none of whose tests was given still has a weight


def test_the_measured_seconds_are_read_from_the_timing_runs_file_and_none_when_it_is_missing(tmp_path):
    measured = tmp_path / "test-durations.json"
    assert measured_seconds(measured) == {}
    measured.write_text('{"wall seconds by test module": {"tests/test_a.py": 12.5}}')
    assert measured_seconds(measured) == {"tests/test_a.py": 12.5}
    measured.write_text("not json")
    assert measured_seconds(measured) == {}


class _Item:
    """What the collection hook reads and writes of a test: id, fixtures, marks."""

    def __init__(self, nodeid, tier, fixtures=()):
        self.nodeid, self.fixturenames, self.marks = nodeid, fixtures, [getattr(pytest.mark, tier).mark]

    def iter_markers(self):
        return iter(self.marks)

    def add_marker(self, marker):
        self.marks.append(marker.mark)

    def group(self):
        return next(mark.args[0] for mark in self.marks if mark.name == "xdist_group")


def test_the_suite_is_handed_out_heaviest_group_first_with_playwright_last_in_its_group():
    from conftest import _group_for_workers

    items = [
        _Item("tests/test_a.py::test_quick", "unit"),
        _Item("tests/test_b.py::test_page", "browser", ("playwright",)),
        _Item("tests/test_b.py::test_file", "browser"),
        _Item("tests/test_c.py::test_proof", "nbgrader", ("proof",)),
        _Item("tests/test_a.py::test_also_quick", "unit"),
    ]
    _group_for_workers(items)
    assert [(item.nodeid, item.group()) for item in items] == [
        ("tests/test_b.py::test_file", "tests/test_b.py"),  # two browser tests weigh more than one of nbgrader
        ("tests/test_b.py::test_page", "tests/test_b.py"),
        ("tests/test_c.py::test_proof", "proof"),
        ("tests/test_a.py::test_quick", "tests/test_a.py"),
        ("tests/test_a.py::test_also_quick", "tests/test_a.py"),
    ]
