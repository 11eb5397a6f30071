"""Which tests share a process when the suite runs on several workers, and which group starts first.

`make test` runs pytest-xdist with this suite's own scheduling (`GroupScheduling`): a worker
takes a whole group, runs it in one process and is handed the next when it is down to its last
test. A group is, by default, one test module, so a module's fixtures are built once. Modules
that share something costly or exclusive share one group (`SHARED`):

- a session fixture that costs minutes (the proof run, the small cohort) is built once, not once
  per worker;
- the hub's fixed accounts and its students' cgroup parent serve one hub at a time.

Groups are handed out heaviest first, so the workers finish close together. A group weighs its
modules' wall seconds as the docs' timing run measured them (`test-durations.json`, written
beside `test-durations.md` by the same run); a module that run has not met weighs its tests'
tier means.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

MEASURED = Path(__file__).resolve().parent.parent / "docs" / "pages" / "figures" / "test-durations.json"

# Seconds a test of each tier takes on average (docs/pages/figures/test-durations.md).
TIER_SECONDS = {"unit": 0.03, "notebook": 4.0, "nbgrader": 4.0, "browser": 12.0, "cluster": 12.0}

# Session fixtures that take minutes, and the group their users share.
SHARED_FIXTURES = {"proof": "proof", "checked_in_process": "proof", "small_cohort": "small-cohort"}

# The modules that share a group. Read by the controller, which sees test ids only; the collection
# (which sees fixtures) refuses a module that asks for a shared fixture and is missing here.
SHARED = {
    "tests/test_check_course.py": "proof",
    "tests/test_check_course_against_proof.py": "proof",
    "tests/test_guarded_notebooks.py": "proof",
    "tests/test_notebooks.py": "proof",
    "tests/test_proof.py": "proof",
    "tests/test_proof_oracle.py": "proof",
    "tests/test_cohort.py": "small-cohort",
    "tests/test_distributed.py": "small-cohort",
    "tests/test_grader_failures.py": "small-cohort",
    "tests/test_isolation.py": "small-cohort",
    "tests/journeys/test_hub_journey.py": "hub",
    "tests/journeys/test_hub_precheck.py": "hub",
    "tests/test_student_limits.py": "hub",
}


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def group_of(nodeid: str) -> str:
    module = module_of(nodeid)
    return SHARED.get(module, module)


def unlisted_sharers(tests: Iterable[tuple[str, Sequence[str]]]) -> list[str]:
    """Modules that ask for a shared session fixture outside its group, from (node id, fixture names) of each test."""
    wrong = set()
    for nodeid, fixtures in tests:
        for name in fixtures:
            if name in SHARED_FIXTURES and group_of(nodeid) != SHARED_FIXTURES[name]:
                wrong.add(f"{module_of(nodeid)} asks for {name}: list it in SHARED as {SHARED_FIXTURES[name]!r}")
    return sorted(wrong)


def measured_seconds(path: Path = MEASURED) -> dict[str, float]:
    """Wall seconds per test module from the docs' timing run; none when that file is missing or unreadable."""
    try:
        return dict(json.loads(path.read_text())["wall seconds by test module"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def group_weights(tests: Iterable[tuple[str, str]], measured: Mapping[str, float]) -> dict[str, float]:
    """Seconds per group, from (node id, tier) of every test: measured per module where known, else by tier."""
    weights: dict[str, float] = {}
    counted: set[str] = set()
    for nodeid, tier in tests:
        module, group = module_of(nodeid), group_of(nodeid)
        if module not in measured:
            weights[group] = weights.get(group, 0.0) + TIER_SECONDS.get(tier, 0.0)
        elif module not in counted:
            weights[group] = weights.get(group, 0.0) + measured[module]
            counted.add(module)
    return weights


def group_scheduling(config, log):
    """pytest-xdist's scope scheduling with this suite's groups for scopes (its `pytest_xdist_make_scheduler` hook)."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """Whole groups to each worker in collection order, the next one when a worker is down to its last test.

        xdist's own scope scheduling queues a further scope while a worker still has two tests to
        run: behind a long test, that scope may wait while another worker has nothing left.
        A worker always keeps its last test until it knows the next (or is told to stop), so the
        next group goes out then.
        """

        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

        def _reschedule(self, node) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
            elif self._pending_of(self.assigned_work[node]) <= 1:
                self._assign_work_unit(node)

    config.option.loadscopereorder = False  # the collection's order is heaviest first: xdist's would count tests
    return GroupScheduling(config, log)
