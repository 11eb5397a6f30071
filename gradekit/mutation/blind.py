"""Answers written blind from the release, graded in process: hand-made mutants from outside the kit.

A blind set is a folder of TOML files, one per notebook, each listing answers
that someone who never read the checks wrote for its exercises: unusual but
correct routes, and plausible wrong ones with their mistake in a sentence.
Each answer runs in its exercise's answer cell beside the reference's other
answers, as a negative control does, and the notebook's checks (visible and
hidden parts) run in this process. A correct answer that loses points is a
grader bug; a wrong one that keeps them is a gap; a wrong one caught with no
misconception named is a diagnosis to add. `judgements.toml` in the same
folder says, for wrong answers, which catalog entry describes the mistake
("" when none does), so a missing or wrong name can be told apart from a
mistake the catalog does not know.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import tomllib
from pathlib import Path
from typing import Callable

from gradekit.authoring.checks_in_process import run_checks
from gradekit.core.course import Course
from gradekit.core.diagnoses import one_line
from gradekit.core.manifest import Exercise, Manifest
from gradekit.mutation.runner import TIME_LIMIT_SECONDS, MutantOutOfTime, alarm, grade_each
from gradekit.proof.subjects import answer_sources

ANSWER_FILES = "[0-9]*.toml"  # one per notebook, named after it
JUDGEMENTS_FILE = "judgements.toml"


@dataclasses.dataclass(frozen=True)
class BlindAnswer:
    notebook: str
    id: str
    exercise: str  # the answer cell's name without its "answer_" prefix
    correct: bool
    code: str  # the whole text of the answer cell
    mistake: str = ""  # for a wrong answer: what is wrong, in the writer's words
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Judgement:
    """Which catalog entry describes a wrong answer's mistake ("" when none does), and why."""

    catalog: str
    reason: str


@dataclasses.dataclass(frozen=True)
class BlindResult:
    answer: BlindAnswer
    kept: float
    possible: float
    named: tuple[str, ...]  # the misconception ids its exercise's failing cells named
    said: str  # the first failing cell's message, on one line
    collateral: tuple[str, ...] = ()  # cells of other exercises that the reference passes and this run failed
    timed_out: bool = False

    @property
    def lost_points(self) -> bool:
        return self.kept < self.possible


@dataclasses.dataclass(frozen=True)
class BlindSet:
    results: tuple[BlindResult, ...]
    judgements: dict[str, Judgement]
    seconds: float

    def judged(self, result: BlindResult) -> Judgement | None:
        return self.judgements.get(result.answer.id)

    @property
    def correct_that_lost(self) -> tuple[BlindResult, ...]:
        return tuple(r for r in self.results if r.answer.correct and r.lost_points)

    @property
    def wrong_that_kept(self) -> tuple[BlindResult, ...]:
        return tuple(r for r in self.results if not r.answer.correct and not r.lost_points)

    @property
    def caught(self) -> tuple[BlindResult, ...]:
        return tuple(r for r in self.results if not r.answer.correct and r.lost_points)

    @property
    def caught_unnamed(self) -> tuple[BlindResult, ...]:
        return tuple(r for r in self.caught if not r.named)

    @property
    def caught_misnamed(self) -> tuple[BlindResult, ...]:
        """Caught with a name, but the judgement says the mistake is another entry's, or no entry's."""
        return tuple(r for r in self.caught if r.named and (j := self.judged(r)) and j.catalog not in r.named)


def load_answers(folder: Path) -> tuple[BlindAnswer, ...]:
    answers = []
    for path in sorted(Path(folder).glob(ANSWER_FILES)):
        data = tomllib.loads(path.read_text())
        answers += [BlindAnswer(notebook=data["notebook"], **entry) for entry in data["answer"]]
    return tuple(answers)


def load_judgements(folder: Path) -> dict[str, Judgement]:
    path = Path(folder) / JUDGEMENTS_FILE
    if not path.exists():
        return {}
    entries = tomllib.loads(path.read_text()).get("judgement", [])
    return {entry["id"]: Judgement(entry["catalog"], entry["reason"]) for entry in entries}


def exercise_of(manifest: Manifest, answer: BlindAnswer) -> Exercise:
    for exercise in manifest.exercises_of(answer.notebook):
        if exercise.answer_cell == f"answer_{answer.exercise}":
            return exercise
    raise KeyError(f"{answer.notebook} has no answer cell answer_{answer.exercise}")


def measure_blind_set(
    course: Course, manifest: Manifest, folder: Path, progress: Callable[[int, int], None] | None = None
) -> BlindSet:
    started = time.monotonic()
    listed = {entry.name for entry in manifest.notebooks}
    answers = tuple(answer for answer in load_answers(folder) if answer.notebook in listed)
    results = grade_each(course, manifest, answers, functools.partial(_grade, manifest), progress)
    return BlindSet(results, load_judgements(folder), time.monotonic() - started)


def _grade(
    manifest: Manifest, script, passing: frozenset[str], answer: BlindAnswer, time_limit: float = TIME_LIMIT_SECONDS
) -> BlindResult:
    exercise = exercise_of(manifest, answer)
    own = {test.cell: test.points for test in exercise.tests}
    answers = {**answer_sources(manifest, answer.notebook, None), exercise.answer_cell: answer.code}
    try:
        with alarm(time_limit):
            outcomes = run_checks(script, answers, f"blind/{answer.id}")
    except MutantOutOfTime:
        return BlindResult(answer, 0.0, sum(own.values()), (), "ran past the time limit", timed_out=True)
    failed = [outcome for outcome in outcomes if outcome.cell in own and not outcome.passed]
    return BlindResult(
        answer,
        kept=sum(outcome.points for outcome in outcomes if outcome.cell in own and outcome.passed),
        possible=sum(own.values()),
        named=tuple(dict.fromkeys(name for outcome in failed for name in outcome.named)),
        said=what_it_said(failed[0].failure) if failed else "",
        collateral=tuple(o.cell for o in outcomes if o.cell not in own and o.cell in passing and not o.passed),
    )


def what_it_said(failure: str) -> str:
    """A failed cell's message on one line: its diagnosis when it has one, else the error's last line (no traceback)."""
    at = failure.find("Diagnosis:")
    if at >= 0:
        return one_line(failure[at:], 400)
    lines = [line for line in failure.splitlines() if line.strip() and not line.startswith((" ", "Traceback"))]
    return one_line(lines[-1] if lines else failure, 400)
