import itertools

import pytest
from similarity_fixtures import ASSIGNMENT, BLANK, COPIES, HONEST, NOTEBOOK, planted_cohort

from gradekit.report.answer_text import starter_texts
from gradekit.report.similarity import rank_notebooks
from gradekit.report.submitted_texts import submitted_texts

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def ranked_texts(tmp_path_factory):
    submitted, release = planted_cohort(tmp_path_factory.mktemp("similarity"))
    read = submitted_texts(submitted, ASSIGNMENT, starter_texts(release))
    texts = read.code
    assert not read.unreadable
    return texts, starter_texts(release)


@pytest.fixture(scope="module")
def ranked(ranked_texts):
    pairs = rank_notebooks(*ranked_texts)
    assert {pair.notebook for pair in pairs} == {NOTEBOOK}
    return {frozenset((pair.first, pair.second)): pair.score for pair in pairs}


def test_every_planted_copy_ranks_above_every_pair_of_honest_answers(ranked):
    copies = {copy: ranked.get(frozenset((copy, original)), 0.0) for copy, (original, _) in COPIES.items()}
    honest = {pair: ranked.get(frozenset(pair), 0.0) for pair in itertools.combinations(HONEST, 2)}
    assert min(copies.values()) > max(honest.values()), (copies, honest)


def test_blank_stubs_share_nothing_once_the_starter_code_is_set_aside(ranked):
    assert frozenset(BLANK) not in ranked
    assert not any(pair & set(BLANK) for pair in ranked)


def test_printing_nothing_on_the_terminal(tmp_path, capfd):
    submitted, release = planted_cohort(tmp_path)
    texts = submitted_texts(submitted, ASSIGNMENT, starter_texts(release)).code
    rank_notebooks(texts, starter_texts(release))
    assert capfd.readouterr() == ("", "")


def test_one_copied_notebook_shows_even_when_the_rest_of_the_work_differs(ranked_texts):
    texts, starters = ranked_texts
    leaves = texts[NOTEBOOK]
    # Two students who wrote everything else on their own: their other "notebook" holds unrelated answers.
    texts = {
        NOTEBOOK: {"ann": leaves["honest-ada"], "cat": leaves["copy-renamed"]},
        "999_other": {"ann": leaves["honest-bo"] * 5, "cat": leaves["honest-dee"] * 5},
    }
    top = rank_notebooks(texts, starters)[0]
    assert (top.notebook, top.first, top.second) == (NOTEBOOK, "ann", "cat") and top.score > 0.9


MODEL = """
def running_mean(values):
    total = 0.0
    for count, value in enumerate(values, start=1):
        total += value
        yield total / count


def clipped(values, low, high):
    return [min(max(value, low), high) for value in values]
"""
OWN_WAY = """
def clipped(values, low, high):
    kept = []
    for value in values:
        if value < low:
            value = low
        elif value > high:
            value = high
        kept.append(value)
    return kept
"""


def test_the_model_answer_is_set_aside_so_only_what_two_students_share_beyond_it_counts():
    own = MODEL.split("def clipped")[0] + OWN_WAY
    texts = {"nb": {"ann": MODEL, "bea": MODEL, "cat": own, "dov": own, "eli": MODEL + "\nx = 1\n"}}
    pairs = rank_notebooks(texts, {"nb": MODEL})
    assert [(p.first, p.second) for p in pairs] == [("cat", "dov")]
    assert pairs[0].score == 1.0
    # Without the model answer set aside, everyone who wrote it looks copied.
    assert len(rank_notebooks(texts, {"nb": ""})) > 1


STARTER = """
def init_params(d, h, k, seed):
    generator = torch.Generator().manual_seed(seed)
    W1 = torch.randn(d, h, dtype=torch.float64, generator=generator) * (2.0 / d) ** 0.5
    W2 = torch.randn(h, k, dtype=torch.float64, generator=generator) * (1.0 / h) ** 0.5
    return W1.requires_grad_(), W2.requires_grad_()
"""
OWN_LOOP = """
def descend(w, grad_fn, steps):
    history = [w]
    while len(history) <= steps:
        step = grad_fn(history[-1]) * 0.25
        history.append(history[-1] - step)
    return history[-1]
"""


def test_students_who_change_only_a_constant_of_the_starter_rank_below_a_planted_copy():
    # Each one's own wrong constant in the starter's scale, and nothing else changed.
    wrong = {"ann": ("(0.01 / d)", "** 0.01"), "bea": ("(0.05 / d)", "** 0.05"), "cat": ("(0.1 / d)", "** 0.1")}
    constants = {
        student: STARTER.replace("(2.0 / d)", scale).replace("(1.0 / h) ** 0.5", f"(1.0 / h) {power}")
        for student, (scale, power) in wrong.items()
    }
    texts = {"nb": {**constants, "dov": STARTER + OWN_LOOP, "eli": STARTER + OWN_LOOP.replace("history", "seen")}}
    pairs = rank_notebooks(texts, {"nb": STARTER})
    assert [(p.first, p.second) for p in pairs] == [("dov", "eli")], pairs
    assert pairs[0].score > 0.9


def test_a_copy_that_changes_its_constants_still_shows():
    changed = OWN_LOOP.replace("0.25", "0.3")
    pairs = rank_notebooks({"nb": {"dov": OWN_LOOP, "eli": changed}}, {"nb": STARTER})
    assert [(p.first, p.second) for p in pairs] == [("dov", "eli")] and pairs[0].score > 0.9
    # The slices point into the student's own text, constants included.
    starts, ends = pairs[0].slices[1]
    assert "0.3" in "".join(changed[start:end] for start, end in zip(starts, ends))
