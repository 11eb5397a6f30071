"""Which submissions look copied: every pair of students' answer texts compared by copydetect's fingerprints.

The release's answer cells (signatures, docstrings, stubs) are the starter code: their fingerprints
are dropped as boilerplate, so what every student was given never counts as copying.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import warnings

from copydetect import CodeFingerprint, compare_files
from copydetect.defaults import GUARANTEE_THRESHOLD, NOISE_THRESHOLD

WINDOW = GUARANTEE_THRESHOLD - NOISE_THRESHOLD + 1


@dataclasses.dataclass(frozen=True)
class SimilarPair:
    notebook: str
    first: str
    second: str
    shares: tuple[float, float]  # the fraction of each one's code found in the other
    slices: tuple  # copydetect's matched character ranges in each raw text

    @property
    def score(self) -> float:
        """The larger share: a student who copied one answer into longer work still shows."""
        return max(self.shares)


@contextlib.contextmanager
def quiet():
    """copydetect may print, warn or log; none of that belongs on the TA's terminal."""
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        warnings.simplefilter("ignore")
        yield


def fingerprint(text: str, boilerplate: list[int]) -> CodeFingerprint:
    # The name only tells copydetect's tokenizer the language; nothing is read from disk.
    return CodeFingerprint("answers.py", NOISE_THRESHOLD, WINDOW, boilerplate=boilerplate, fp=io.StringIO(text))


def rank_notebooks(texts: dict[str, dict[str, str]], starters: dict[str, str]) -> list[SimilarPair]:
    """Every pair of students on every notebook, most alike first: copying one notebook shows even in a long assignment."""
    pairs = [
        pair for notebook in sorted(texts) for pair in rank_pairs(texts[notebook], starters.get(notebook, ""), notebook)
    ]
    return sorted(pairs, key=lambda pair: (-pair.score, pair.notebook, pair.first, pair.second))


def rank_pairs(texts: dict[str, str], starter: str, notebook: str = "") -> list[SimilarPair]:
    """Every pair of students on one notebook, most alike first; pairs sharing nothing are left out."""
    with quiet():
        boilerplate = list(fingerprint(starter, []).hashes)
        prints = {student: fingerprint(text, boilerplate) for student, text in sorted(texts.items())}
        pairs = [_compare(notebook, a, b, prints[a], prints[b]) for a, b in itertools.combinations(sorted(prints), 2)]
    shared = [pair for pair in pairs if pair.score > 0]
    return sorted(shared, key=lambda pair: (-pair.score, pair.first, pair.second))


def _compare(notebook: str, first: str, second: str, a: CodeFingerprint, b: CodeFingerprint) -> SimilarPair:
    overlap, shares, slices = compare_files(a, b)
    shares = tuple(float(share) for share in shares) if overlap else (0.0, 0.0)
    return SimilarPair(notebook, first, second, shares, slices)
