"""Access to the reference solutions and the negative controls in solutions/."""
from __future__ import annotations

import dataclasses
import importlib
import inspect
from types import ModuleType
from typing import Callable

from gradekit.authoring.cells import function_source
from gradekit.manifest import Manifest

CONTROL_SEPARATOR = "__"


@dataclasses.dataclass(frozen=True)
class NegativeControl:
    """An answer written the way a student holding one misconception would write it."""

    name: str
    notebook: str
    function: str
    misconception: str
    fails: tuple[str, ...]
    source: str

    @property
    def student_id(self) -> str:
        return f"control-{self.name}"


def reference_module(manifest: Manifest, notebook: str) -> ModuleType:
    return importlib.import_module(manifest.notebook(notebook).reference)


def reference_function(manifest: Manifest, notebook: str, name: str) -> Callable:
    module = reference_module(manifest, notebook)
    try:
        return getattr(module, name)
    except AttributeError:
        raise LookupError(f"{module.__name__} has no reference function {name!r}") from None


def load_controls(manifest: Manifest) -> tuple[NegativeControl, ...]:
    """Every negative control, in notebook order, then in the order they are written."""
    controls = []
    for entry in manifest.notebooks:
        controls.extend(_controls_in(importlib.import_module(entry.controls), entry.name))
    return tuple(controls)


def _controls_in(module: ModuleType, notebook: str) -> list[NegativeControl]:
    marked = [
        f for f in vars(module).values()
        if inspect.isfunction(f) and hasattr(f, "negative_control") and f.__module__ == module.__name__
    ]
    marked.sort(key=lambda f: f.__code__.co_firstlineno)
    return [_control(f, notebook) for f in marked]


def _control(function: Callable, notebook: str) -> NegativeControl:
    target, separator, slug = function.__name__.partition(CONTROL_SEPARATOR)
    if not separator or not slug:
        raise ValueError(f"control {function.__name__} must be named <answer function>__<what the student did>")
    mark = function.negative_control
    return NegativeControl(
        name=f"{notebook.split('_')[0]}-{function.__name__}",
        notebook=notebook,
        function=target,
        misconception=mark["misconception"],
        fails=mark["fails"],
        source=function_source(function, name=target),
    )
