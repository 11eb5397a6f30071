"""One mutation run from end to end: generate the mutants, grade them, apply the reviews, judge."""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

from gradekit.core.course import Course
from gradekit.core.manifest import Manifest
from gradekit.mutation.equivalents import NotebookScore, Review, load_reviews, notebook_scores, problems
from gradekit.mutation.mutants import course_mutants
from gradekit.mutation.runner import MutantResult, grade_mutants


@dataclasses.dataclass(frozen=True)
class Adequacy:
    results: tuple[MutantResult, ...]
    reviews: dict[str, Review]
    scores: tuple[NotebookScore, ...]
    problems: tuple[str, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.problems


def measure_adequacy(
    course: Course,
    manifest: Manifest,
    complete: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Adequacy:
    started = time.monotonic()
    results = grade_mutants(course, manifest, course_mutants(manifest), progress)
    reviews = load_reviews()
    return Adequacy(
        results,
        reviews,
        notebook_scores(results, reviews),
        tuple(problems(results, reviews, complete)),
        time.monotonic() - started,
    )
