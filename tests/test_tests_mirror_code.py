"""Tests mirror the code: each module of the engine's packages has a test module named after it.

The rule: `gradekit/<package>/<module>.py` is tested in `tests/test_<module>.py`, or in
`tests/test_<package>_<module>.py` where the module's name alone would be ambiguous or the
package prefix is the convention (every module of `precheck/`). A new module without one fails
here; the Design page ("Where things go") says so to whoever adds it.
"""

import pkgutil
from pathlib import Path

import pytest

import gradekit

pytestmark = pytest.mark.unit

KIT = Path(gradekit.__file__).parent
TESTS = Path(__file__).parent
PACKAGES = ("grading", "sandbox", "precheck", "commands")

# (package, module): why it has no test module of its own. None today: every module has one.
ALLOWED: frozenset[tuple[str, str]] = frozenset()


def accepted_names(package: str, module: str) -> tuple[str, str]:
    """The two names the rule accepts for the test module of `package/module`."""
    return f"test_{module}.py", f"test_{package}_{module}.py"


def untested_modules(kit: Path, tests: Path, packages: tuple[str, ...]) -> list[tuple[str, str]]:
    """(package, module) of every module of `packages` with no test module in `tests` by the rule."""
    missing = []
    for package in packages:
        for found in pkgutil.iter_modules([str(kit / package)]):
            if not any((tests / name).is_file() for name in accepted_names(package, found.name)):
                missing.append((package, found.name))
    return missing


def test_every_module_of_the_engine_has_a_test_module_named_after_it():
    missing = sorted(set(untested_modules(KIT, TESTS, PACKAGES)) - ALLOWED)
    assert missing == [], (
        "no test module by the rule (tests/test_<module>.py or tests/test_<package>_<module>.py): "
        + (", ".join(f"{package}/{module}.py" for package, module in missing))
    )


def test_every_allowed_module_still_exists_and_still_lacks_its_test_module():
    """An allow-list entry goes as soon as its module is gone or has its test module."""
    stale = [entry for entry in ALLOWED if not (KIT / entry[0] / f"{entry[1]}.py").is_file()]
    untested = set(untested_modules(KIT, TESTS, PACKAGES))
    stale += [entry for entry in ALLOWED if entry not in untested]
    assert stale == [], f"remove from ALLOWED: {sorted(stale)}"


def test_the_walk_fails_on_a_module_without_a_test_and_accepts_either_name(tmp_path):
    kit, tests = tmp_path / "kit", tmp_path / "tests"
    for package in ("grading", "precheck"):
        (kit / package).mkdir(parents=True)
        (kit / package / "__init__.py").touch()
    for module in ("grading/exchange", "grading/intake", "precheck/desk"):
        (kit / f"{module}.py").touch()
    tests.mkdir()
    (tests / "test_exchange.py").touch()
    (tests / "test_precheck_desk.py").touch()
    assert untested_modules(kit, tests, ("grading", "precheck")) == [("grading", "intake")]
    (tests / "test_grading_intake.py").touch()
    assert untested_modules(kit, tests, ("grading", "precheck")) == []
