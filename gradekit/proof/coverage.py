"""What an exercise's text says its inputs may be, against what its test cells actually pass.

An exercise that says "a floating tensor of any shape" promises the student every floating dtype
and every number of dimensions; a hidden test that only ever passes float64 vectors leaves a wrong
answer (one that breaks on float16, or on a 0-dim tensor) with full marks. `check` records the
calls each test cell sends to the student's side while the reference runs, and this module sets
them beside the input properties the exercise's text states, so a gap shows before students find it.
A gap fails `check` unless `solutions/input_gaps.toml` declares it with a reason; a declared gap the
tests have since closed fails it too, so the list only holds what is still open.

The text is read for a few phrases only, each with the properties it states:

- "floating tensor(s)", "floating-point tensor(s)", "any floating dtype": every floating dtype;
- "integer tensor(s)", "any integer dtype": every integer dtype;
- "complex tensor(s)": both complex dtypes;
- "every dtype", "any dtype": every dtype the installed torch defines;
- "any shape", "any number of dimensions": a 0-dim, a 1-dim and a tensor of two dimensions or more.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

import torch

from gradekit.core.course import REPO_ROOT
from gradekit.core.manifest import Exercise
from gradekit.core.notebook_script import Role, ScriptCell

FLOATING = ("float16", "bfloat16", "float32", "float64")
INTEGER = ("uint8", "int8", "int16", "int32", "int64")
COMPLEX = ("complex64", "complex128")
SHAPES = ("0-dim", "1-dim", "2-dim or more")
KNOWN_GAPS_FILE = "solutions/input_gaps.toml"
KNOWN_GAPS = REPO_ROOT / KNOWN_GAPS_FILE


def every_dtype() -> tuple[str, ...]:
    """Every dtype the installed torch defines, aliases (torch.half, torch.double) counted once."""
    found = {str(value).removeprefix("torch.") for value in vars(torch).values() if isinstance(value, torch.dtype)}
    return tuple(sorted(found))


# A phrase of the exercise's text, and the input properties it states.
STATED_BY = (
    (re.compile(r"\bfloating(?:-point)? tensors?\b|\bany floating(?:-point)? dtype\b", re.I), FLOATING),
    (re.compile(r"\binteger tensors?\b|\bany integer dtype\b", re.I), INTEGER),
    (re.compile(r"\bcomplex tensors?\b", re.I), COMPLEX),
    (re.compile(r"\b(?:every|any) dtype\b", re.I), None),  # every dtype: read from torch when needed
    (re.compile(r"\bany shape\b|\bany number of dimensions\b", re.I), SHAPES),
)


@dataclasses.dataclass(frozen=True)
class ExerciseCoverage:
    """One exercise: what its text states its inputs may be, what its test cells passed, and what was never passed."""

    notebook: str
    functions: tuple[str, ...]
    phrases: tuple[str, ...]  # the phrases of the text that state properties
    stated: tuple[str, ...]
    passed: tuple[str, ...]  # every dtype and shape kind its test cells passed (stated or not)

    @property
    def gaps(self) -> tuple[str, ...]:
        return tuple(p for p in self.stated if p not in self.passed)


def exercise_texts(script: tuple[ScriptCell, ...]) -> dict[str, str]:
    """Each answer cell's exercise text: the lesson and task text since the previous answer or test cell.

    Table rows are left out: a table in the lesson describes tools ("`t.item()` | a one-element tensor
    (any shape)"), not the exercise's inputs.
    """
    texts, pending = {}, []
    for cell in script:
        if cell.role.is_markdown:
            pending.append("\n".join(line for line in cell.body.splitlines() if not line.lstrip().startswith("|")))
        elif cell.role is Role.ANSWER:
            texts[cell.grade_id] = "\n".join(pending)
            pending = []
        elif cell.role is Role.TEST:
            pending = []
    return texts


def stated_properties(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The phrases of `text` that state input properties, and those properties, in a stable order."""
    phrases: list[str] = []
    stated: list[str] = []
    for pattern, properties in STATED_BY:
        found = [match.group(0).lower() for match in pattern.finditer(text)]
        if found:
            phrases += dict.fromkeys(found)
            stated += properties if properties is not None else every_dtype()
    return tuple(dict.fromkeys(phrases)), tuple(dict.fromkeys(stated))


def input_properties(value: object, depth: int = 0) -> set[str]:
    """The dtypes and shape kinds of the tensors (and dtypes) in a call's arguments, containers walked."""
    if depth > 8:
        return set()
    if isinstance(value, torch.Tensor):
        return {str(value.dtype).removeprefix("torch."), SHAPES[min(value.dim(), 2)]}
    if isinstance(value, torch.dtype):
        return {str(value).removeprefix("torch.")}
    if isinstance(value, functools.partial):
        return input_properties((value.args, value.keywords), depth + 1)
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return set().union(*(input_properties(item, depth + 1) for item in value))
    return set()


@dataclasses.dataclass
class CallRecord:
    """The calls a notebook's test cells sent to the student's side: by test cell, the function's name and its inputs."""

    calls: dict[str, list[tuple[str, set[str]]]] = dataclasses.field(default_factory=dict)

    def __call__(self, cell: str, function: object, args: tuple, kwargs: dict) -> None:
        name = getattr(function, "__name__", "")
        self.calls.setdefault(cell, []).append((name, input_properties((args, kwargs))))

    def passed_to(self, cells: Iterable[str], functions: tuple[str, ...]) -> set[str]:
        """What the cells passed to the exercise's functions (to anything they called, if never to those)."""
        made = [call for cell in cells for call in self.calls.get(cell, [])]
        own = [properties for name, properties in made if name in functions] or [p for _, p in made]
        return set().union(*own) if own else set()


def coverage(
    notebook: str, script: tuple[ScriptCell, ...], exercises: Iterable[Exercise], record: CallRecord
) -> list[ExerciseCoverage]:
    """Per exercise of the notebook that states input properties, what its test cells passed."""
    texts = exercise_texts(script)
    found = []
    for exercise in exercises:
        phrases, stated = stated_properties(texts.get(exercise.answer_cell, ""))
        if not stated:
            continue
        passed = record.passed_to((t.cell for t in exercise.tests), exercise.functions)
        found.append(ExerciseCoverage(notebook, exercise.functions, phrases, stated, tuple(sorted(passed))))
    return found


def coverage_lines(covered: Iterable[ExerciseCoverage], known: Iterable[KnownGap] = ()) -> list[str]:
    """One line per exercise for the terminal: what its text states, what its tests never passed, and why if declared."""
    reasons = {(gap.notebook, gap.function): gap.reason for gap in known}
    lines = []
    for item in covered:
        name = f"{item.notebook} {'/'.join(item.functions)}"
        said = ", ".join(f'"{phrase}"' for phrase in item.phrases)
        verdict = f"never passed: {', '.join(item.gaps)}" if item.gaps else "every stated property passed"
        reason = next((reasons[(item.notebook, f)] for f in item.functions if (item.notebook, f) in reasons), None)
        declared = f" (declared open in {KNOWN_GAPS_FILE}: {reason})" if item.gaps and reason else ""
        lines.append(f"  {name:<36} {said}: {verdict}{declared}")
    return lines


def coverage_table(covered: Iterable[ExerciseCoverage]) -> str:
    """The same as a Markdown table for the docs."""
    rows = [
        "| exercise | the text says | stated inputs | passed by its test cells | never passed |",
        "| --- | --- | --- | --- | --- |",
    ]
    for item in covered:
        passed = [p for p in item.passed if p in item.stated]
        rows.append(
            f"| {item.notebook} `{'`, `'.join(item.functions)}` | {', '.join(item.phrases)} | "
            f"{_listed(item.stated)} | {_listed(passed)} | {', '.join(item.gaps) or 'none'} |"
        )
    return "\n".join(rows) + "\n"


def _listed(properties: Iterable[str]) -> str:
    """The properties as a list, with every dtype of torch shortened to those words."""
    properties = list(properties)
    dtypes = every_dtype()
    if set(dtypes) <= set(properties):
        rest = [p for p in properties if p not in dtypes]
        properties = [f"every dtype torch defines ({len(dtypes)})", *rest]
    return ", ".join(properties)


@dataclasses.dataclass(frozen=True)
class KnownGap:
    """A stated input property a course lead knows the tests do not pass yet, and why."""

    notebook: str
    function: str
    never_passed: tuple[str, ...]
    reason: str


def load_known_gaps(path: Path) -> tuple[KnownGap, ...]:
    if not path.is_file():
        return ()
    entries = tomllib.loads(path.read_text()).get("gap", [])
    return tuple(KnownGap(e["notebook"], e["function"], tuple(e["never_passed"]), e["reason"]) for e in entries)


def gap_problems(covered: Iterable[ExerciseCoverage], known: Iterable[KnownGap], notebooks: set[str]) -> list[str]:
    """A gap nobody declared, and a declared gap the tests now close (or that no exercise has), are problems."""
    declared = {(gap.notebook, gap.function): gap for gap in known if gap.notebook in notebooks}
    problems = []
    for item in covered:
        gap = next((declared.pop((item.notebook, f)) for f in item.functions if (item.notebook, f) in declared), None)
        allowed = set(gap.never_passed) if gap else set()
        unknown = [p for p in item.gaps if p not in allowed]
        if unknown:
            problems.append(
                f"{item.notebook} {'/'.join(item.functions)}: the text says {', '.join(item.phrases)}, "
                f"yet no test cell passes {', '.join(unknown)}: add such inputs (with a negative control for the edge)"
            )
        closed = sorted(allowed - set(item.gaps))
        if closed:
            problems.append(
                f"{item.notebook} {'/'.join(item.functions)}: {', '.join(closed)} declared never passed in "
                f"{KNOWN_GAPS_FILE}, but a test cell now passes it: remove it there"
            )
    problems += [
        f"{gap.notebook} {gap.function}: a gap is declared in {KNOWN_GAPS_FILE}, but its text states no such input: "
        "remove it there"
        for gap in declared.values()
    ]
    return problems
