"""Written answers are compared too: a copied paragraph ranks above honest ones, the release's prompt never counts."""

import nbformat
import pytest

from gradekit.report.similarity_page import write_similarity_report
from gradekit.report.submitted_texts import submitted_texts
from gradekit.report.written_similarity import WRITTEN_SUFFIX, rank_written, runs, written_starters

pytestmark = pytest.mark.unit

PROMPT = "Write your answer here. Give three reasons in your own words."
ORIGINAL = (
    "Compiling hides graph breaks behind a fast first impression, the first call pays for the whole "
    "compilation, and compiled results may differ from eager ones in their last bits, so they must be "
    "compared with tolerances."
)
COPIED = ORIGINAL.replace("fast first impression", "quick first impression").replace("must be", "should be")
HONEST = (
    "Eager code is easier to debug with print and breakpoints; small models gain little from a compiler; "
    "and every new input shape may trigger a recompilation that costs seconds."
)


def _notebook(text):
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["nbgrader"] = {"grade_id": "answer_compile_blindly", "solution": True, "grade": True, "points": 2}
    return nbformat.v4.new_notebook(cells=[cell])


def _write(folder, text):
    folder.mkdir(parents=True)
    nbformat.write(_notebook(text), folder / "090_decisions.ipynb")


@pytest.fixture
def cohort(tmp_path):
    submitted, release = tmp_path / "submitted", tmp_path / "release"
    for student, text in {"ada": ORIGINAL, "bo": COPIED, "cy": HONEST, "dee": PROMPT, "eli": PROMPT}.items():
        _write(submitted / student / "autograd", text)
    _write(release, PROMPT)
    return submitted, release


def test_a_copied_paragraph_heads_the_ranking_and_the_prompt_counts_for_nothing(cohort):
    submitted, release = cohort
    pairs = rank_written(submitted_texts(submitted, "autograd", ["090_decisions"]).written, written_starters(release))
    assert (pairs[0].first, pairs[0].second, pairs[0].notebook) == ("ada", "bo", "090_decisions" + WRITTEN_SUFFIX)
    assert pairs[0].score > 0.5
    assert all({pair.first, pair.second} != {"dee", "eli"} for pair in pairs)  # both kept the prompt: nothing shared
    assert all(pair.score < 0.2 for pair in pairs[1:])


def test_runs_ignore_case_and_punctuation():
    assert runs("The first call, PAYS for it!") == runs("the first call pays for it")
    assert runs("too short") == set()


def test_the_similarity_page_ranks_written_pairs_with_the_code_pairs(cohort, tmp_path):
    submitted, release = cohort
    page = write_similarity_report(submitted, release, "autograd", tmp_path / "report").read_text()
    assert "ada and bo" in page and "090_decisions (written)" in page
    assert "quick first impression" in page  # both sides shown, escaped as text
