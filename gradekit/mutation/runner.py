"""Grade each mutant on the in-process engine: killed when a test cell the reference passes fails.

A mutant runs as its notebook's answer cell, in place of the reference
function, exactly like a negative control in `gradekit check`, up to the first
test cell that kills it: the cells after it cannot change the verdict, and
they would cost most of the run (the compile notebook's checks compile).
A mutant that runs past the time limit counts as killed (real grading would
stop it at the cell timeout and score the cell zero).
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
from typing import Callable, Protocol, Sequence, TypeVar

from gradekit.authoring.checks_in_process import TestOutcome, load_support_modules, run_checks
from gradekit.authoring.solutions import NegativeControl
from gradekit.core.course import Course
from gradekit.core.manifest import SCRIPTS_DIR, Manifest
from gradekit.core.notebook_script import read_script
from gradekit.mutation.mutants import Mutant
from gradekit.proof.subjects import answer_sources

TIME_LIMIT_SECONDS = 30


class Graded(Protocol):
    """Anything graded in one notebook's answer cell: a mutant, a blind answer."""

    @property
    def notebook(self) -> str: ...


Item = TypeVar("Item", bound=Graded)
Result = TypeVar("Result")


class MutantOutOfTime(BaseException):
    """Raised by the alarm: a BaseException so the notebook's own `except Exception` cannot swallow it."""


@dataclasses.dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    killed_by: tuple[str, ...]  # the test cell that killed it (the run stops there); empty when it survived
    timed_out: bool = False

    @property
    def killed(self) -> bool:
        return bool(self.killed_by) or self.timed_out


def grade_mutants(
    course: Course,
    manifest: Manifest,
    mutants: tuple[Mutant, ...],
    progress: Callable[[int, int], None] | None = None,
    time_limit: float = TIME_LIMIT_SECONDS,
) -> tuple[MutantResult, ...]:
    return grade_each(
        course, manifest, mutants, lambda script, passing, m: _grade(manifest, script, passing, m, time_limit), progress
    )


def grade_each(
    course: Course,
    manifest: Manifest,
    items: Sequence[Item],
    grade: Callable[[tuple, frozenset[str], Item], Result],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Result, ...]:
    """`grade(script, cells the reference passes, item)` for each item, in its notebook, scripts read once."""
    load_support_modules(course.source_dir)
    notebooks = dict.fromkeys(item.notebook for item in items)
    scripts = {name: read_script(SCRIPTS_DIR / f"{name}.py") for name in notebooks}
    passing = {name: _reference_passes(manifest, name, script) for name, script in scripts.items()}
    results = []
    for done, item in enumerate(items, 1):
        results.append(grade(scripts[item.notebook], passing[item.notebook], item))
        if progress:
            progress(done, len(items))
    return tuple(results)


def _reference_passes(manifest: Manifest, notebook: str, script) -> frozenset[str]:
    outcomes = run_checks(script, answer_sources(manifest, notebook, None), f"reference/{notebook}")
    return frozenset(o.cell for o in outcomes if o.passed)


def _grade(manifest: Manifest, script, passing: frozenset[str], mutant: Mutant, time_limit: float) -> MutantResult:
    stand_in = NegativeControl(mutant.id, mutant.notebook, mutant.function, "", (), mutant.source)
    answers = answer_sources(manifest, mutant.notebook, stand_in)

    def kills(outcome: TestOutcome) -> bool:
        return outcome.cell in passing and not outcome.passed

    try:  # the alarm covers the cells only: the run's clean-up always finishes
        outcomes = run_checks(
            script, answers, f"mutant/{mutant.id}", stop_after=kills, cells_within=lambda: alarm(time_limit)
        )
    except MutantOutOfTime:
        return MutantResult(mutant, (), timed_out=True)
    return MutantResult(mutant, tuple(o.cell for o in outcomes if kills(o)))


@contextlib.contextmanager
def alarm(seconds: float):
    def out_of_time(signum, frame):
        raise MutantOutOfTime()

    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
