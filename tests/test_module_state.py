"""No module of the grading engine keeps mutable state at module level: a run travels as values, never as globals.

Every module of gradekit/grading/ is imported and each name it binds is
checked: constants (numbers, text, paths, tuples and frozensets of them,
read-only mappings, enums, frozen dataclasses), functions, classes and modules
pass; a dict, list, set, bytearray or any other mutable object fails, and so
does a `global` statement that rebinds a module name. The allow-list below
names each exception and why a standard API forces it.
"""

import __future__

import ast
import dataclasses
import enum
import importlib
import logging
import pkgutil
import re
import types
from pathlib import Path, PurePath

import pytest

import gradekit.grading

pytestmark = pytest.mark.unit

GRADING = Path(gradekit.grading.__file__).parent

# (module, name): why a standard API forces state there.
ALLOWED = {
    # ProcessPoolExecutor and Dask run a module-level function in each worker process: a worker's
    # graders (loaded nbgrader, scratch course) are kept where that function finds them, one per process.
    ("executors", "_graders"),
    # Dask runs a module-level function in each worker process: the grading processes that worker forked
    # (forked_grader.py) are kept where that function finds them, warm from one task to the next.
    ("executors", "_grading_processes"),
    # os.fork copies every descriptor of the process: the process's one lock around its forks, and the
    # children it forked, whose pipes a later child closes, are facts of the process, never of a run.
    ("forked_grader", "_FORKING"),
    ("forked_grader", "_children"),
    # functools.cache of a fact about this machine (can it make a box?), never of a run.
    ("worker_box", "unavailable_reason"),
    # functools.cache of a course module's compiled code, keyed by its content: a fact of the file, never of a run.
    ("sealed_checks", "_helper_code"),
    # functools.cache of nbgrader's metadata schema made a validator, keyed by its version: a fact of the
    # installed nbgrader, never of a run.
    ("metadata_check", "_schema_validator"),
    # The process's one warm parent, started on first use and ended at exit (atexit), like a pool worker's grader.
    ("warm_kernels", "_zygote"),
    # Set by the pool's initializer, which can only call a module-level function, once per worker process.
    ("warm_kernels", "_run_tag"),
    # The warm parents a process keeps between its runs (ended at exit, like its one zygote), and the lock
    # of the runs that take and give them back: the process's, lent to one run at a time.
    ("kept_parents", "_kept"),
    ("kept_parents", "_keeping"),
    # The process's one kit cgroup (a fact of this machine, made at its first kernel and removed at
    # exit), and the counter naming its kernels' groups inside it: the process's, never a run's.
    ("kernel_cgroups", "unavailable_reason"),
    ("kernel_cgroups", "_layout"),
    ("kernel_cgroups", "_sequence"),
    # Its ended kernels' groups still waiting for their last process to die: removed at its next kernel or exit.
    ("kernel_cgroups", "_ending"),
}

IMMUTABLE = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    range,
    frozenset,
    PurePath,
    re.Pattern,
    types.MappingProxyType,
    enum.Enum,
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.GenericAlias,
    __future__._Feature,
    # logging's own API: a module's logger is looked up by name, once, at import.
    logging.Logger,
)


def grading_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules([str(GRADING)]))


def is_constant(value: object) -> bool:
    if isinstance(value, tuple):
        return all(is_constant(item) for item in value)
    if isinstance(value, IMMUTABLE) or type(value).__module__ == "typing":
        return True
    parameters = getattr(type(value), "__dataclass_params__", None)
    return dataclasses.is_dataclass(value) and parameters is not None and parameters.frozen


def mutable_names(module_name: str) -> list[str]:
    module = importlib.import_module(f"gradekit.grading.{module_name}")
    return sorted(
        name
        for name, value in vars(module).items()
        if not (name.startswith("__") and name.endswith("__"))
        and (module_name, name) not in ALLOWED
        and not is_constant(value)
    )


def rebound_globals(module_name: str, source: str | None = None) -> list[str]:
    tree = ast.parse((GRADING / f"{module_name}.py").read_text() if source is None else source)
    names = {name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names}
    return sorted(name for name in names if (module_name, name) not in ALLOWED)


@pytest.mark.parametrize("module_name", grading_modules())
def test_a_grading_module_binds_no_mutable_object(module_name):
    assert mutable_names(module_name) == []


@pytest.mark.parametrize("module_name", grading_modules())
def test_a_grading_module_rebinds_no_global(module_name):
    assert rebound_globals(module_name) == []


def test_the_walk_sees_every_module_of_the_grading_engine():
    assert {"safe_execute", "submission_grader", "grading_run", "run_sink"} <= set(grading_modules())
    assert len(grading_modules()) == len(list(GRADING.glob("*.py"))) - 1  # every file but __init__.py


def test_the_check_fails_on_each_kind_of_mutable_state(monkeypatch):
    from gradekit.grading import cohort

    for value in ({}, [], set(), bytearray(), object(), logging.getLogger(__name__).handlers):
        monkeypatch.setattr(cohort, "RUN_STATE", value, raising=False)
        assert mutable_names("cohort") == ["RUN_STATE"], value
    for value in ((1, "two", Path("three")), frozenset({4}), types.MappingProxyType({"five": 5})):
        monkeypatch.setattr(cohort, "RUN_STATE", value, raising=False)
        assert mutable_names("cohort") == [], value
    monkeypatch.setattr(cohort, "RUN_STATE", ((1, [2]),), raising=False)
    assert mutable_names("cohort") == ["RUN_STATE"]


def test_the_check_fails_on_a_rebound_global():
    source = "_state = 0\n\ndef keep(value):\n    global _state\n    _state = value\n"
    assert rebound_globals("cohort", source) == ["_state"]
    assert rebound_globals("warm_kernels", source.replace("_state", "_zygote")) == []


def test_every_allowed_name_is_still_there():
    for module_name, name in ALLOWED:
        module = importlib.import_module(f"gradekit.grading.{module_name}")
        assert hasattr(module, name), f"{module_name}.{name} is gone: drop it from the allow-list"
