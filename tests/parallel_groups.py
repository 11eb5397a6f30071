"""Which tests share a process when the suite runs on several workers, and which group starts first.

`make test` runs pytest-xdist with `--dist loadgroup`: a worker takes a whole group, runs it in
one process and asks for the next. A group is, by default, one test module, so a module's
fixtures are built once. Modules that share something costly or exclusive share one group:

- a session fixture that costs minutes (the proof run, the small cohort) is built once, not once
  per worker;
- the hub's fixed accounts and its students' cgroup parent serve one hub at a time.

Groups are handed out heaviest first, so the workers finish close together. A group weighs its
modules' wall seconds as the docs' timing figure measured them (`test-durations.json`, written
beside `test-durations.md` by the same run); a module that figure has not met weighs its tests'
tier means.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

MEASURED = Path(__file__).resolve().parent.parent / "docs" / "pages" / "figures" / "test-durations.json"

# Seconds a test of each tier takes on average (docs/pages/figures/test-durations.md).
TIER_SECONDS = {"unit": 0.03, "notebook": 4.0, "nbgrader": 4.0, "browser": 12.0, "cluster": 12.0}

# Session fixtures that take minutes: their users form one group, so the fixture is built once.
SHARED_FIXTURES = {"proof": "proof", "checked_in_process": "proof", "small_cohort": "small-cohort"}

# Modules that take the machine's one hub: its journey accounts and the students' cgroup parent.
SHARED_MACHINE = {
    "tests/journeys/test_hub_journey.py": "hub",
    "tests/journeys/test_hub_precheck.py": "hub",
    "tests/test_student_limits.py": "hub",
}


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def group_of_modules(tests: Iterable[tuple[str, Sequence[str]]]) -> dict[str, str]:
    """Each module's group, from (node id, fixture names) of its tests."""
    groups: dict[str, str] = {}
    for nodeid, fixtures in tests:
        module = module_of(nodeid)
        shared = next((SHARED_FIXTURES[name] for name in fixtures if name in SHARED_FIXTURES), None)
        groups.setdefault(module, SHARED_MACHINE.get(module, module))
        if shared:
            groups[module] = shared
    return groups


def measured_seconds(path: Path = MEASURED) -> dict[str, float]:
    """Wall seconds per test module from the docs' timing run; none when that file is missing or unreadable."""
    try:
        return dict(json.loads(path.read_text())["wall seconds by test module"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def group_weights(
    tests: Iterable[tuple[str, str]], groups: dict[str, str], measured: Mapping[str, float]
) -> dict[str, float]:
    """Seconds per group, from (node id, tier) of every test: measured per module where known, else by tier."""
    weights = dict.fromkeys(set(groups.values()), 0.0)
    for module in set(groups) & set(measured):
        weights[groups[module]] += measured[module]
    for nodeid, tier in tests:
        if module_of(nodeid) not in measured:
            weights[groups[module_of(nodeid)]] += TIER_SECONDS.get(tier, 0.0)
    return weights
