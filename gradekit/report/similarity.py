"""Which submissions look copied: every pair of students' answer texts compared by copydetect's fingerprints.

The release's answer cells (signatures, docstrings, stubs) are the starter code: their fingerprints
are dropped as boilerplate, so what every student was given never counts as copying. The model
answer (the source notebooks' solutions) is dropped too: students who both reach the expected
answer have not copied each other, and a class of such pairs would bury the ones who did.
Numbers are compared as placeholders: students who change only a constant of the starter code or
the model answer (each to a different wrong value) share nothing beyond it, while a copy still shares
its whole structure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import warnings

from copydetect import CodeFingerprint, compare_files
from copydetect.defaults import GUARANTEE_THRESHOLD, NOISE_THRESHOLD
from copydetect.utils import filter_code, get_token_coverage, hashed_kgrams
from pygments import lexers, token

WINDOW = GUARANTEE_THRESHOLD - NOISE_THRESHOLD + 1
# Less shared code than this (in copydetect's filtered tokens, about two short lines) is a stock line, not a copy.
MIN_SHARED_TOKENS = 2 * NOISE_THRESHOLD


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
    held = CodeFingerprint(
        "answers.py", NOISE_THRESHOLD, WINDOW, boilerplate=boilerplate, fp=io.StringIO(numbers_masked(text))
    )
    held.raw_code = text  # the masked text has the same length, so copydetect's slices fit the student's own
    return held


def numbers_masked(text: str) -> str:
    """`text` with every numeric literal written over by a name of the same length.

    copydetect reads a name as any other name, so `lr = 0.01` and `lr = 0.5` become the same tokens, and
    character positions stay where they were in the student's text.
    """
    lexer = lexers.get_lexer_by_name("python")
    pieces = []
    for _, kind, value in lexer.get_tokens_unprocessed(text):
        pieces.append("n" * len(value) if kind in token.Number else value)
    masked = "".join(pieces)
    return masked if len(masked) == len(text) else text


def rank_notebooks(texts: dict[str, dict[str, str]], starters: dict[str, str]) -> list[SimilarPair]:
    """Every pair of students on every notebook, most alike first: copying one notebook shows even in a long assignment."""
    pairs = [
        pair for notebook in sorted(texts) for pair in rank_pairs(texts[notebook], starters.get(notebook, ""), notebook)
    ]
    return sorted(pairs, key=lambda pair: (-pair.score, pair.notebook, pair.first, pair.second))


def rank_pairs(texts: dict[str, str], starter: str, notebook: str = "") -> list[SimilarPair]:
    """Every pair of students on one notebook, most alike first; pairs sharing nothing are left out."""
    with quiet():
        boilerplate = every_kgram(starter)
        prints = {student: fingerprint(text, []) for student, text in sorted(texts.items())}
        for held in prints.values():
            set_aside(held, boilerplate)
        pairs = [_compare(notebook, a, b, prints[a], prints[b]) for a, b in itertools.combinations(sorted(prints), 2)]
    shared = [pair for pair in pairs if pair.score > 0]
    return sorted(shared, key=lambda pair: (-pair.score, pair.first, pair.second))


def every_kgram(text: str) -> set:
    """The hash of every k-gram of the text, not only the ones winnowing keeps: a student's text keeps others."""
    filtered, _ = filter_code(numbers_masked(text), "answers.py")
    return set(hashed_kgrams(filtered, k=NOISE_THRESHOLD)) if len(filtered) >= NOISE_THRESHOLD else set()


def set_aside(held: CodeFingerprint, hashes: set) -> None:
    """Drop the given fingerprints from `held`, and the code only they covered from its size.

    Done here rather than as copydetect's boilerplate, whose removal assumes a file's fingerprints never repeat.
    """
    if not hashes & held.hashes:
        return
    held.hashes = held.hashes - hashes
    held.hash_idx = {h: places for h, places in held.hash_idx.items() if h not in hashes}
    held.token_coverage = get_token_coverage(held.hash_idx, held.k, len(held.filtered_code))


def _compare(notebook: str, first: str, second: str, a: CodeFingerprint, b: CodeFingerprint) -> SimilarPair:
    overlap, shares, slices = compare_files(a, b)
    shares = tuple(float(share) for share in shares) if overlap >= MIN_SHARED_TOKENS else (0.0, 0.0)
    return SimilarPair(notebook, first, second, shares, slices)
