"""Reviews of survivors and the per-notebook score: what fails the mutation bar."""

import pytest

from gradekit.mutation.equivalents import Review, load_reviews, notebook_scores, problems
from gradekit.mutation.mutants import Mutant
from gradekit.mutation.runner import MutantResult

pytestmark = pytest.mark.unit


def _result(notebook: str, killed: bool) -> MutantResult:
    mutant = Mutant(f"{notebook[:3]}-f-{'k' if killed else 's'}", notebook, "f", "number", "", "")
    return MutantResult(mutant, ("test_f",) if killed else ())


def test_an_unreviewed_survivor_a_stale_review_and_a_low_score_are_each_reported():
    results = (_result("010_history", True), _result("010_history", False))
    reviews = {
        "010-f-k": Review("010-f-k", "equivalent", "was equal once"),
        "010-gone": Review("010-gone", "tolerated", "old"),
    }
    found = problems(results, reviews)
    assert any("010-f-s survives unreviewed" in p for p in found)
    assert any("010-f-k is reviewed as equivalent but is now killed" in p for p in found)
    assert any("010-gone is reviewed but no longer a mutant" in p for p in found)
    assert any("below 95%" in p for p in found)


def test_an_equivalent_survivor_leaves_the_denominator_and_a_tolerated_one_counts():
    results = tuple(_result("010_history", True) for _ in range(19)) + (_result("010_history", False),)
    equivalent = notebook_scores(results, {"010-f-s": Review("010-f-s", "equivalent", "same values")})[0]
    tolerated = notebook_scores(results, {"010-f-s": Review("010-f-s", "tolerated", "not tested")})[0]
    assert equivalent.score == 1.0 and tolerated.score == 0.95


def test_a_review_needs_a_known_verdict_and_a_reason(tmp_path):
    path = tmp_path / "reviews.toml"
    path.write_text('[[mutant]]\nid = "010-f-s"\nverdict = "probably fine"\nreason = "looks alike"\n')
    with pytest.raises(ValueError, match="needs a verdict"):
        load_reviews(path)
    path.write_text('[[mutant]]\nid = "010-f-s"\nverdict = "equivalent"\nreason = ""\n')
    with pytest.raises(ValueError, match="needs a verdict"):
        load_reviews(path)


def test_the_course_file_reads():
    assert all(review.reason for review in load_reviews().values())
