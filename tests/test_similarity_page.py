import pytest
from similarity_fixtures import ASSIGNMENT, planted_cohort

from gradekit.report.similarity_page import PAGE_NAME, SCROLLING_BOX, write_similarity_report

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("similarity-page")
    submitted, release = planted_cohort(root)
    broken = submitted / "broken-json" / ASSIGNMENT
    broken.mkdir(parents=True)
    (broken / "020_leaves.ipynb").write_text('{"cells": [ not json')
    path = write_similarity_report(submitted, release, ASSIGNMENT, root / "class-report")
    assert path.name == PAGE_NAME
    return path.read_text()


def test_the_page_shows_both_sides_of_a_copied_pair_with_the_matches_marked(page):
    section = page.split('id="pair-1"')[1].split('id="pair-2"')[0]
    assert section.count("<h3>") == 2 and section.count(SCROLLING_BOX) == 2
    assert "<mark>" in section.split(SCROLLING_BOX)[1] and "<mark>" in section.split(SCROLLING_BOX)[2]


def test_copies_head_the_ranking_and_blank_stubs_are_not_listed(page):
    ranking = page.split("<table>")[1]
    first_three = ranking.split("</tr>")[1:4]
    assert all("copy-" in row for row in first_three)
    assert "blank-" not in page


def test_the_page_is_self_contained_and_names_an_unreadable_submission(page):
    assert "<script" not in page and "http:" not in page and "https:" not in page and "<link" not in page
    assert "broken-json" in page and "Not compared" in page


ATTACK = (
    "def grad(x):\n    # </pre><script>window.__pwned = 1</script><img src=x onerror='window.__pwned = 2'>\n"
    "    y = (x ** 2).sum()\n    y.backward()\n    return x.grad\n" * 3
)


def test_a_students_markup_is_shown_as_text_under_a_policy_that_runs_no_script():
    from gradekit.core.html_page import POLICY
    from gradekit.report.similarity import SimilarPair, rank_pairs
    from gradekit.report.similarity_page import similarity_page

    texts = {"ann": ATTACK, "bob": ATTACK + "\n# mine"}
    code_pair = rank_pairs(texts, "", "010_history")[0]
    written_pair = SimilarPair("010_history", "ann", "bob", (1.0, 1.0), ())
    html = similarity_page([code_pair, written_pair], {"010_history": texts}, {})
    assert "<script" not in html and "<img" not in html
    assert html.count("&lt;script&gt;window.__pwned = 1&lt;/script&gt;") >= 4  # both sides of both pairs
    assert f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">' in html
    assert "script-src" not in POLICY and "default-src 'none'" in POLICY
