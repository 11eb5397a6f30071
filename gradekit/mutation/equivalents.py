"""The reviewed survivors: solutions/equivalent_mutants.toml, and the score it leads to.

A survivor is reviewed once, by id, with one of two verdicts and a reason:
- `equivalent`: no answer-visible behaviour the text asks for changes (a
  constant that cancels, a default the text does not state, a copy of a copy);
  it leaves the score's denominator;
- `tolerated`: a real difference the course chooses not to test (with why);
  it counts as a survivor.
An unreviewed survivor, a reviewed id that no longer exists or is now killed,
and a notebook under the bar are all problems: the mutation test fails on them.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from gradekit.mutation.runner import MutantResult

EQUIVALENTS_FILE = Path(__file__).resolve().parents[2] / "solutions" / "equivalent_mutants.toml"
VERDICTS = ("equivalent", "tolerated")
REQUIRED_SCORE = 0.95


@dataclasses.dataclass(frozen=True)
class Review:
    id: str
    verdict: str
    reason: str


@dataclasses.dataclass(frozen=True)
class NotebookScore:
    notebook: str
    mutants: int
    killed: int
    equivalent: int
    tolerated: int
    unreviewed: int

    @property
    def score(self) -> float:
        """Killed over the mutants that are not equivalent: what the bar applies to."""
        counted = self.mutants - self.equivalent
        return self.killed / counted if counted else 1.0


def load_reviews(path: Path = EQUIVALENTS_FILE) -> dict[str, Review]:
    if not path.exists():
        return {}
    entries = tomllib.loads(path.read_text()).get("mutant", [])
    reviews = {}
    for entry in entries:
        review = Review(entry["id"], entry["verdict"], entry.get("reason", "").strip())
        if review.verdict not in VERDICTS or not review.reason:
            raise ValueError(f"{path.name}: mutant {review.id} needs a verdict in {VERDICTS} and a reason")
        if review.id in reviews:
            raise ValueError(f"{path.name}: mutant {review.id} is reviewed twice")
        reviews[review.id] = review
    return reviews


def notebook_scores(results: tuple[MutantResult, ...], reviews: dict[str, Review]) -> tuple[NotebookScore, ...]:
    notebooks = dict.fromkeys(r.mutant.notebook for r in results)
    return tuple(_score(n, [r for r in results if r.mutant.notebook == n], reviews) for n in notebooks)


def _score(notebook: str, results: list[MutantResult], reviews: dict[str, Review]) -> NotebookScore:
    survivors = [r.mutant.id for r in results if not r.killed]
    verdicts = [reviews[s].verdict if s in reviews else "unreviewed" for s in survivors]
    return NotebookScore(
        notebook,
        len(results),
        len(results) - len(survivors),
        verdicts.count("equivalent"),
        verdicts.count("tolerated"),
        verdicts.count("unreviewed"),
    )


def problems(results: tuple[MutantResult, ...], reviews: dict[str, Review], complete: bool = True) -> list[str]:
    """What keeps the mutation bar from holding; empty when it holds.

    `complete` is False when only some notebooks ran: reviews of the others are not stale then.
    """
    found = [
        f"{r.mutant.id} survives unreviewed ({r.mutant.operator}: {r.mutant.change})"
        for r in results
        if not r.killed and r.mutant.id not in reviews
    ]
    by_id = {r.mutant.id: r for r in results}
    ran = {r.mutant.notebook.split("_")[0] for r in results}
    for review in reviews.values():
        result = by_id.get(review.id)
        if result is None and (complete or review.id.split("-")[0] in ran):
            found.append(f"{review.id} is reviewed but no longer a mutant of the reference: remove its review")
        elif result is not None and result.killed:
            found.append(
                f"{review.id} is reviewed as {review.verdict} but is now killed by {', '.join(result.killed_by) or 'the time limit'}: remove its review"
            )
    for score in notebook_scores(results, reviews):
        if score.score < REQUIRED_SCORE:
            found.append(
                f"{score.notebook}: {score.score:.1%} of non-equivalent mutants killed, below {REQUIRED_SCORE:.0%}"
            )
    return found
