"""Formgrader's grading page as the course draws it: the student's markup inert, under a policy that
runs only formgrader's own scripts."""

import re

import nbformat
import pytest
from nbconvert.exporters import HTMLExporter
from test_feedback_page import (
    ACTIVE_ATTRIBUTE,
    ATTACK_MARKDOWN,
    ATTACK_OUTPUTS,
    HEADINGS_NAMED_AFTER_TESTS,
    ISOLATED_HTML,
    MISPLACED_MARKDOWN,
    MISSING_ATTACHMENT,
    ODD_METADATA_OUTPUTS,
    _error,
    _test_cell,
    markup_stays_in_place,
    odd_cells,
)
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from gradekit.core.course import CONFIG_FILE
from gradekit.grading.formgrader_page import INLINE_HANDLER, INLINE_SCRIPT, page_policy, source_hash

pytestmark = pytest.mark.unit

# What formgrader's SubmissionHandler hands its exporter for one submission.
RESOURCES = {
    "assignment_id": "autograd",
    "notebook_id": "090_decisions",
    "submission_id": "0a1b2c",
    "index": 0,
    "total": 2,
    "base_url": "/user/ta",
    "student": "ada",
    "last_name": None,
    "first_name": None,
    "notebook_path": "course/autograded/ada/autograd/090_decisions.ipynb",
}
POLICY_META = re.compile(r'<meta content="([^"]+)" http-equiv="Content-Security-Policy"/>')


def formgrader_exporter() -> HTMLExporter:
    """The exporter formgrader makes: its own template name, then the course's configuration over it."""
    config = Config({"HTMLExporter": {"template_name": "formgrade"}})
    config.merge(PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config())
    return HTMLExporter(config=config)


def written_answer(source: str):
    cell = nbformat.v4.new_markdown_cell(source)
    cell.metadata["nbgrader"] = {"solution": True, "grade": True, "task": False, "grade_id": "answer_x", "points": 2}
    return cell


def grading_page(cells) -> str:
    notebook = nbformat.v4.new_notebook(cells=cells)
    return formgrader_exporter().from_notebook_node(notebook, resources=dict(RESOURCES))[0]


def attack_grading_page() -> str:
    failed = _test_cell(
        _error("Diagnosis", "[misconception: grad-by-formula] x.grad was written by hand"), *ATTACK_OUTPUTS
    )
    return grading_page([written_answer(ATTACK_MARKDOWN), failed])


def policy_of(html: str) -> str:
    return POLICY_META.search(html[: html.index("</head>")]).group(1)


def test_the_students_markup_reaches_formgraders_page_inert_and_their_javascript_not_at_all():
    html = attack_grading_page()
    notebook = html[html.index('id="notebook-container"') :]
    assert "<script" not in notebook and "<svg" not in notebook
    assert not ACTIVE_ATTRIBUTE.search(notebook)
    assert "&lt;script&gt;document.title = 'pwned'&lt;/script&gt;" in notebook
    assert "&lt;script&gt;window.__pwned = 5&lt;/script&gt;" in notebook
    assert "window.__pwned = 2" not in html and "window.__pwned = 3" not in html
    # The TA still grades: the written answer's score and comment boxes are there, its math as TeX.
    assert 'id="answer_x"' in notebook and 'id="answer_x-comment"' in notebook
    assert "$x = (1, 2, 3)$" in notebook


def test_the_grading_page_runs_only_the_inline_scripts_and_handlers_formgrader_draws_itself():
    html = attack_grading_page()
    policy = policy_of(html)
    script_src = policy.split("script-src")[1].split(";")[0]
    assert "'unsafe-inline'" not in script_src
    assert "default-src 'none'" in policy and "object-src 'none'" in policy and "base-uri 'none'" in policy
    own = grading_page([])
    own_sources = INLINE_SCRIPT.findall(own) + INLINE_HANDLER.findall(own)
    # nbgrader's own: the page's variables, its name toggle and tooltips, its two onclick handlers;
    # and the course's one, which names the score boxes for screen readers.
    assert len(own_sources) == 6 and "toggle_name(true);" in own_sources
    assert sum("aria-label" in source for source in own_sources) == 1
    assert sorted(re.findall(r"'sha256-[^']+'", script_src)) == sorted({source_hash(s) for s in own_sources})
    # Every inline script and handler of the hostile page is one of them: none is the student's.
    assert {source_hash(s) for s in INLINE_SCRIPT.findall(html) + INLINE_HANDLER.findall(html)} == {
        source_hash(s) for s in own_sources
    }
    assert html.index("Content-Security-Policy") < html.index("<script")


def test_a_policy_hashes_exactly_the_inline_scripts_and_handlers_it_is_given():
    markup = '<script type="text/javascript">var a = 1;</script><script src="x.js"></script><b onclick="f();">'
    policy = page_policy(markup)
    assert re.findall(r"'sha256-[^']+'", policy) == sorted([source_hash("var a = 1;"), source_hash("f();")])
    assert source_hash("var a = 1;") == "'sha256-" + "+dZ6udsWxNVoGfScAq7t5IIF5UJb4F6RhjbN6oe1p4w=" + "'"


def test_a_heading_of_the_students_takes_no_score_box_of_the_page():
    # formgrader finds a cell's score box by the first element whose id is the cell's grade id.
    html = grading_page([written_answer(HEADINGS_NAMED_AFTER_TESTS), _test_cell()])
    for grade_id in ("test_square_sum_grad", "answer_x"):
        assert html.count(f'id="{grade_id}"') == 1, grade_id
    assert not re.search(r"<h6[^>]*\sid=", html)


def test_markdown_stays_in_its_cell_links_to_no_script_and_fetches_nothing_and_odd_outputs_still_draw():
    cells = [written_answer(MISPLACED_MARKDOWN), nbformat.v4.new_markdown_cell(MISSING_ATTACHMENT), *odd_cells()]
    html = grading_page([*cells, _test_cell(*ODD_METADATA_OUTPUTS)])
    markup_stays_in_place(html)


def test_html_kept_apart_from_formgraders_page_is_drawn_in_a_frame_with_a_title():
    html = grading_page([_test_cell(ISOLATED_HTML)])
    frames = re.findall(r"<iframe[^>]*>", html)
    assert len(frames) == 1 and 'title="' in frames[0]
