import os
import threading
from pathlib import Path

import pytest
from similarity_fixtures import ASSIGNMENT, NOTEBOOK, planted_cohort

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


def test_what_a_student_leaves_in_place_of_a_notebook_is_named_unreadable_never_followed_or_waited_on(tmp_path):
    """A link to a FIFO would block the report, one to a device would read for ever, one to a file the TA can read
    would quote it in the page; a notebook the assignment does not have is not the report's to read at all."""
    submitted, release = planted_cohort(tmp_path)
    secret = tmp_path / "ta-only.txt"
    secret.write_text("KIT_GRADEBOOK_URL=postgresql://ta:s3cret@db/course")
    os.mkfifo(tmp_path / "pipe")
    left = {
        "linked-pipe": tmp_path / "pipe",
        "linked-device": Path("/dev/zero"),
        "linked-secret": secret,
    }
    for student, target in left.items():
        folder = submitted / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{NOTEBOOK}.ipynb").symlink_to(target)
    os.mkfifo(submitted / "linked-pipe" / ASSIGNMENT / "notes.ipynb")  # not the assignment's: never opened
    (submitted / "linked-secret" / ASSIGNMENT / "notes.ipynb").symlink_to(secret)
    fifo_itself = submitted / "a-pipe" / ASSIGNMENT
    fifo_itself.mkdir(parents=True)
    os.mkfifo(fifo_itself / f"{NOTEBOOK}.ipynb")

    written = []
    report = threading.Thread(
        target=lambda: written.append(write_similarity_report(submitted, release, ASSIGNMENT, tmp_path / "report")),
        daemon=True,  # were it to block on a FIFO, the test fails below rather than hang
    )
    report.start()
    report.join(timeout=60)
    assert not report.is_alive() and written, "the report waited on what a student left"
    page = written[0].read_text()
    for student in (*left, "a-pipe"):
        assert student in page.split("Not compared")[1], student
    assert "s3cret" not in page and "notes" not in page
