"""The suite's worker groups: a module by default, shared costly fixtures and the hub together, heaviest first."""

from pathlib import Path

import pytest
from parallel_groups import SHARED, TIER_SECONDS, group_of, group_weights, measured_seconds, unlisted_sharers

pytestmark = pytest.mark.unit


def test_a_module_is_its_own_group_unless_it_shares_a_costly_fixture_or_the_hub():
    assert group_of("tests/test_cores.py::test_one") == "tests/test_cores.py"
    assert group_of("tests/test_proof.py::test_one[x]") == "proof"
    assert group_of("tests/test_cohort.py::test_one") == "small-cohort"
    assert group_of("tests/journeys/test_hub_precheck.py::test_one") == group_of("tests/test_student_limits.py::t")


def test_a_module_that_asks_for_a_shared_fixture_outside_its_group_is_named():
    tests = [
        ("tests/test_proof.py::test_one", ("proof", "tmp_path")),
        ("tests/test_new.py::test_one", ("tmp_path", "small_cohort")),
        ("tests/test_new.py::test_two", ("small_cohort",)),
        ("tests/test_cores.py::test_one", ("tmp_path",)),
    ]
    assert unlisted_sharers(tests) == ["tests/test_new.py asks for small_cohort: list it in SHARED as 'small-cohort'"]


def test_a_group_weighs_its_modules_measured_seconds_once_or_else_its_tests_tier_means():
    tests = [
        ("tests/test_proof.py::test_one", "unit"),
        ("tests/test_proof.py::test_two", "nbgrader"),
        ("tests/test_notebooks.py::test_one", "notebook"),
        ("tests/test_cores.py::test_one", "unit"),
    ]
    weights = group_weights(tests, {"tests/test_proof.py": 150.0, "tests/test_gone.py": 9.0})
    assert weights == {"proof": pytest.approx(150.0 + TIER_SECONDS["notebook"]), "tests/test_cores.py": 0.03}


def test_the_measured_seconds_are_read_from_the_timing_runs_file_and_none_when_it_is_missing(tmp_path):
    measured = tmp_path / "test-durations.json"
    assert measured_seconds(measured) == {}
    measured.write_text('{"wall seconds by test module": {"tests/test_a.py": 12.5}}')
    assert measured_seconds(measured) == {"tests/test_a.py": 12.5}
    measured.write_text("not json")
    assert measured_seconds(measured) == {}


def test_every_module_the_groups_name_is_in_the_suite():
    root = Path(__file__).resolve().parent.parent
    assert [module for module in SHARED if not (root / module).is_file()] == []


class _Item:
    """What the collection hook reads of a test: its id, fixtures and marks."""

    def __init__(self, nodeid, tier, fixtures=()):
        self.nodeid, self.fixturenames, self.marks = nodeid, fixtures, [getattr(pytest.mark, tier).mark]

    def iter_markers(self):
        return iter(self.marks)


def test_the_suite_is_handed_out_heaviest_group_first_with_playwright_last_in_its_group():
    from conftest import _group_for_workers

    items = [
        _Item("tests/test_a.py::test_quick", "unit"),
        _Item("tests/test_b.py::test_page", "browser", ("playwright",)),
        _Item("tests/test_b.py::test_file", "browser"),
        _Item("tests/test_c.py::test_grades", "nbgrader"),
        _Item("tests/test_a.py::test_also_quick", "unit"),
    ]
    _group_for_workers(items)
    assert [item.nodeid for item in items] == [
        "tests/test_b.py::test_file",  # two browser tests weigh more than one of nbgrader
        "tests/test_b.py::test_page",
        "tests/test_c.py::test_grades",
        "tests/test_a.py::test_quick",
        "tests/test_a.py::test_also_quick",
    ]


def test_a_module_asking_for_the_proof_outside_its_group_stops_the_collection():
    from conftest import _group_for_workers

    with pytest.raises(pytest.UsageError, match="tests/test_c.py asks for proof"):
        _group_for_workers([_Item("tests/test_c.py::test_grades", "nbgrader", ("proof",))])
