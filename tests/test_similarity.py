import itertools

import pytest

from gradekit.report.answer_text import notebooks_text, student_texts
from gradekit.report.similarity import rank_pairs
from similarity_fixtures import ASSIGNMENT, BLANK, COPIES, HONEST, planted_cohort

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def ranked(tmp_path_factory):
    submitted, release = planted_cohort(tmp_path_factory.mktemp("similarity"))
    texts, unreadable = student_texts(submitted, ASSIGNMENT)
    assert not unreadable
    starter = notebooks_text(sorted(release.glob("*.ipynb")))
    return {frozenset((pair.first, pair.second)): pair.score for pair in rank_pairs(texts, starter)}


def test_every_planted_copy_ranks_above_every_pair_of_honest_answers(ranked):
    copies = {copy: ranked.get(frozenset((copy, original)), 0.0) for copy, (original, _) in COPIES.items()}
    honest = {pair: ranked.get(frozenset(pair), 0.0) for pair in itertools.combinations(HONEST, 2)}
    assert min(copies.values()) > max(honest.values()), (copies, honest)


def test_blank_stubs_share_nothing_once_the_starter_code_is_set_aside(ranked):
    assert frozenset(BLANK) not in ranked
    assert not any(pair & set(BLANK) for pair in ranked)


def test_printing_nothing_on_the_terminal(tmp_path, capfd):
    submitted, release = planted_cohort(tmp_path)
    texts, _ = student_texts(submitted, ASSIGNMENT)
    rank_pairs(texts, notebooks_text(sorted(release.glob("*.ipynb"))))
    assert capfd.readouterr() == ("", "")
