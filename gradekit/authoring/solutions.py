"""Access to the reference solutions, the negative controls and the correct alternatives in solutions/."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from types import ModuleType
from typing import Callable

from gradekit.authoring.cells import function_source
from gradekit.core.manifest import Manifest

CONTROL_SEPARATOR = "__"
ALTERNATIVES_PACKAGE = "solutions.alternatives"


@dataclasses.dataclass(frozen=True)
class NegativeControl:
    """An answer written the way a student holding one misconception would write it.

    A correct alternative is the same record with no misconception and no cells
    to fail: a right answer written unlike the reference, that must keep full marks.
    """

    name: str
    notebook: str
    function: str
    misconception: str
    fails: tuple[str, ...]
    source: str
    hidden_only: str = ""  # why no visible check can stop it: nothing on the page contradicts the mistake

    @property
    def is_alternative(self) -> bool:
        return not self.misconception

    @property
    def student_id(self) -> str:
        return f"{'alternative' if self.is_alternative else 'control'}-{self.name}"


def reference_module(manifest: Manifest, notebook: str) -> ModuleType:
    return importlib.import_module(manifest.notebook(notebook).reference)


def reference_function(manifest: Manifest, notebook: str, name: str) -> Callable:
    module = reference_module(manifest, notebook)
    try:
        return getattr(module, name)
    except AttributeError:
        raise LookupError(f"{module.__name__} has no reference function {name!r}") from None


def load_controls(manifest: Manifest) -> tuple[NegativeControl, ...]:
    """Per notebook in order, its negative controls then its correct alternatives, each in the order written."""
    controls = []
    for entry in manifest.notebooks:
        controls.extend(_controls_in(importlib.import_module(entry.controls), entry.name, "negative_control"))
        alternatives = _alternatives_module(entry.controls)
        if alternatives is not None:
            controls.extend(_controls_in(alternatives, entry.name, "correct_alternative"))
    return tuple(controls)


def _alternatives_module(controls_module: str) -> ModuleType | None:
    name = ALTERNATIVES_PACKAGE + controls_module[controls_module.rindex(".") :]
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as missing:
        if missing.name != name:
            raise
        return None


def _controls_in(module: ModuleType, notebook: str, mark: str) -> list[NegativeControl]:
    marked = [
        f
        for f in vars(module).values()
        if inspect.isfunction(f) and hasattr(f, mark) and f.__module__ == module.__name__
    ]
    marked.sort(key=lambda f: inspect.unwrap(f).__code__.co_firstlineno)  # a decorated one by its own def
    return [_control(f, notebook) for f in marked]


def _control(function: Callable, notebook: str) -> NegativeControl:
    target, separator, slug = function.__name__.partition(CONTROL_SEPARATOR)
    if not separator or not slug:
        raise ValueError(f"{function.__name__} must be named <answer function>__<what it does differently>")
    mark = getattr(function, "negative_control", None) or {"misconception": "", "fails": ()}
    return NegativeControl(
        name=f"{notebook.split('_')[0]}-{function.__name__}",
        notebook=notebook,
        function=target,
        misconception=mark["misconception"],
        fails=mark["fails"],
        source=function_source(function, name=target),
        hidden_only=mark.get("hidden_only", ""),
    )
