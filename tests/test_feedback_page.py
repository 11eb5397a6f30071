"""The feedback page: one summary line per graded cell, wrapping outputs, math without a CDN."""

import os
import re
from collections import Counter

import nbformat
import nbgrader
import pytest
from bs4 import BeautifulSoup
from nbconvert.filters.highlight import Highlight2HTML
from traitlets.config import Config

import gradekit.grading.feedback_page as feedback_page
from gradekit.grading.feedback_mathjax import FOLDER
from gradekit.grading.feedback_page import (
    INLINE_SCRIPT,
    MAX_MARKUP_DEPTH,
    STDERR_FINDING,
    FeedbackPage,
    MetadataAsTemplatesRead,
    ShallowMarkup,
    diagnosis_line,
    left_for_htmlexporter,
    markup_depth,
    script_hash,
    with_policy,
)

pytestmark = pytest.mark.unit

# Where nbgrader's GenerateFeedback points the page's exporter for bootstrap.min.css.
BOOTSTRAP_CSS = os.path.join(
    os.path.dirname(nbgrader.__file__),
    "server_extensions",
    "formgrader",
    "static",
    "node_modules",
    "bootstrap",
    "dist",
    "css",
)


def _test_cell(*outputs, score=0.0, points=2.0, grade_id="test_square_sum_grad"):
    cell = nbformat.v4.new_code_cell("check()", outputs=list(outputs))
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "grade_id": grade_id,
        "points": points,
        "score": score,
    }
    return cell


def _error(ename, evalue):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def test_a_diagnosis_reads_as_its_misconception_then_its_message_on_one_line():
    cell = _test_cell(_error("Diagnosis", "[misconception: grad-by-formula] x.grad was\nwritten   by hand"))
    assert diagnosis_line(cell) == "grad-by-formula: x.grad was written by hand"


def test_any_other_error_reads_as_its_type_and_message():
    assert diagnosis_line(_test_cell(_error("KeyError", "'w'"))) == "KeyError: 'w'"


def test_a_cell_that_lost_points_for_stderr_says_so():
    stderr = nbformat.v4.new_output("stream", name="stderr", text="a warning\n")
    assert diagnosis_line(_test_cell(stderr)) == STDERR_FINDING


def test_a_cell_with_full_marks_has_nothing_to_report():
    assert diagnosis_line(_test_cell(_error("Diagnosis", "[misconception: x] y"), score=2.0)) == ""


def _exporter(**sections):
    return FeedbackPage(
        config=Config(
            {"HTMLExporter": {"template_name": "feedback", "extra_template_paths": [BOOTSTRAP_CSS]}, **sections}
        )
    )


def _page(cells, exporter=None, **sections):
    notebook = nbformat.v4.new_notebook(cells=cells)
    resources = {"nbgrader": {"notebook": "010_history", "score": 0.0, "max_score": 4.0, "late_penalty": 0}}
    exporter = exporter or _exporter(**sections)
    return exporter.from_notebook_node(notebook, resources=resources)[0]


def _summary_lines(html):
    """The summary's items as a reader sees them: tags dropped, spaces collapsed."""
    summary = html[html.index('<div id="toc">') : html.index("</ol>")]
    return [" ".join(re.sub(r"<[^>]+>", " ", item).split()) for item in summary.split("<li")[1:]]


def test_the_summary_names_each_test_cell_its_score_and_its_diagnosis_escaped():
    failed = _test_cell(_error("Diagnosis", "[misconception: grad-by-formula] got <b>tensor</b>"))
    passed = _test_cell(score=2.0, grade_id="test_gradient_at")
    html = _page([nbformat.v4.new_markdown_cell("For $x = (1, 2, 3)$"), failed, passed])
    assert _summary_lines(html) == [
        'class="failed"> test_square_sum_grad \u2014 0 / 2 \u2014 grad-by-formula: got &lt;b&gt;tensor&lt;/b&gt;',
        'class="passed"> test_gradient_at \u2014 2 / 2',
    ]
    assert "<b>tensor</b>" not in html


REMOTE = re.compile(r"""(src|href)\s*=\s*["']?(https?:)?//|\.src\s*=\s*["'](https?:)?//""", re.IGNORECASE)


def test_outputs_wrap_and_math_comes_from_the_jupyter_server_or_the_copy_beside_the_pages_never_a_cdn():
    html = _page([_test_cell(_error("Diagnosis", "[misconception: m] " + "long " * 200))])
    assert "white-space: pre-wrap" in html
    # Between words: the page's own rule undoes the base stylesheet's `pre { word-break: break-all }`.
    assert "overflow-wrap: break-word;\n  word-break: normal;" in html
    assert "static/jupyter_server_mathjax/MathJax.js" in html
    assert f'"../../{FOLDER}/MathJax.js"' in html  # <feedback>/<student>/<assignment>/page.html, opened from disk
    assert not REMOTE.search(html)


def test_the_lessons_tables_have_borders_and_padding():
    table = "| expression | tracked by autograd? |\n|---|---|\n| `x * 2` | yes |"
    html = _page([nbformat.v4.new_markdown_cell(table)])
    assert "<table>" in html or "<table" in html
    style = html[: html.index("<table")]
    assert "border-collapse: collapse" in style and "padding: 0.25em 0.6em" in style


def test_the_course_configuration_makes_it_nbgraders_feedback_exporter():
    from traitlets.config.loader import PyFileConfigLoader

    from gradekit.core.course import CONFIG_FILE

    config = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
    assert config.GenerateFeedback.exporter_class.__name__ == FeedbackPage.__name__


ONE_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _display(data):
    return nbformat.v4.new_output("display_data", data=data)


# Each payload, if it ran, would set the page's title or window.__pwned (the browser test looks).
ATTACK_OUTPUTS = (
    _display({"text/html": "<script>document.title = 'pwned'</script><img src=x onerror=\"window.__pwned = 1\">"}),
    _display({"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload='window.__pwned = 2'></svg>"}),
    _display({"application/javascript": "window.__pwned = 3", "text/plain": "<js>"}),
    _display({"text/markdown": "<script>window.__pwned = 4</script>"}),
    # An image's size is the notebook's to name: unquoted, a space in it began another attribute.
    nbformat.v4.new_output(
        "display_data",
        data={"image/png": ONE_PIXEL_PNG},
        metadata={"image/png": {"width": "1 onerror=window.__pwned=8", "height": "2 onload=x()"}},
    ),
)
ATTACK_MARKDOWN = "My answer: $x = (1, 2, 3)$ <script>window.__pwned = 5</script><b onmouseover='x()'>bold</b>"


def attack_page():
    """A feedback page whose graded cell lost points and displays every attack, after a hostile written answer."""
    failed = _test_cell(
        _error("Diagnosis", "[misconception: grad-by-formula] x.grad was written by hand"), *ATTACK_OUTPUTS
    )
    return _page([nbformat.v4.new_markdown_cell(ATTACK_MARKDOWN), failed])


ACTIVE_ATTRIBUTE = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.IGNORECASE)  # an event handler inside a real tag


def _body(html):
    return html[html.index("<body") :]


def test_the_students_markup_reaches_the_page_inert_and_their_javascript_not_at_all():
    body = _body(attack_page())
    notebook = body[body.index('id="notebook-container"') :]
    assert "<script" not in notebook and "<svg" not in notebook
    assert not ACTIVE_ATTRIBUTE.search(notebook)
    assert "&lt;script&gt;document.title = 'pwned'&lt;/script&gt;" in body
    assert "&lt;script&gt;window.__pwned = 5&lt;/script&gt;" in body
    assert "<svg" not in body and "window.__pwned = 2" not in body and "window.__pwned = 3" not in body
    assert "onmouseover" not in body
    # What the student should read is still there: the diagnosis, their math as TeX for MathJax.
    assert "x.grad was written by hand" in body
    assert "$x = (1, 2, 3)$" in body


def test_the_page_carries_a_policy_that_trusts_only_its_own_scripts():
    html = attack_page()
    head = html[: html.index("</head>")]
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"/>', head).group(1)
    assert "default-src 'none'" in policy and "object-src 'none'" in policy and "base-uri 'none'" in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    own_scripts = INLINE_SCRIPT.findall(_page([]))
    assert own_scripts and sorted(script_hash(s) for s in own_scripts) == re.findall(r"'sha256-[^']+'", policy)
    assert html.index("Content-Security-Policy") < html.index("<script")


def _policy(html):
    return re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"/>', html).group(1)


def test_the_policy_trusts_the_same_scripts_whatever_the_notebooks_metadata_says():
    """The page's own scripts are read from the page drawn again without its cells, from the notebook as the
    page's steps left it: a student's notebook metadata adds no script to trust, and none reaches the page."""
    hostile = {
        "title": "<script>window.__pwned = 6</script>",
        "kernelspec": {"name": "python3", "display_name": "<script>window.__pwned = 7</script>", "language": "python"},
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
    }
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("an answer")], metadata=hostile)
    resources = {"nbgrader": {"notebook": "010_history", "score": 0.0, "max_score": 4.0, "late_penalty": 0}}
    html = _exporter().from_notebook_node(notebook, resources=resources)[0]
    assert _policy(html) == _policy(_page([]))
    assert "window.__pwned" not in html


def test_a_page_without_a_head_is_refused_rather_than_left_without_its_policy():
    with pytest.raises(ValueError, match="Content-Security-Policy"):
        with_policy("<html><body></body></html>", "default-src 'none'")


def test_the_course_configuration_sanitizes_the_notebook_formgrader_shows():
    from nbconvert.preprocessors.sanitize import SanitizeHTML
    from traitlets.config.loader import PyFileConfigLoader

    from gradekit.core.course import CONFIG_FILE

    config = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
    names = [p.__name__ for p in config.HTMLExporter.preprocessors]
    assert names == [ShallowMarkup.__name__, SanitizeHTML.__name__, MetadataAsTemplatesRead.__name__]


def _images(html):
    return BeautifulSoup(html, features="html.parser").select("img")


def test_every_image_the_page_draws_has_alternative_text_so_the_page_needs_no_second_pass():
    described = nbformat.v4.new_output(
        "display_data", data={"image/jpeg": ONE_PIXEL_PNG}, metadata={"image/jpeg": {"alt": 'a "plot"', "width": 40}}
    )
    bare = _display({"image/png": ONE_PIXEL_PNG})
    markdown = nbformat.v4.new_markdown_cell("![](loss.png) and ![the loss](loss.png)")
    html = _page([markdown, _test_cell(described, bare)])
    images = _images(html)
    assert [image.get("alt") for image in images] == [
        "",
        "the loss",
        'a "plot"',
        "An image the cell displayed, with no description",
    ]
    assert images[2]["width"] == "40"
    assert not left_for_htmlexporter(html)


def test_an_image_size_that_is_not_a_number_is_dropped():
    html = attack_page()
    (image,) = _images(html)
    assert set(image.attrs) == {"src", "alt"}


def test_a_page_with_an_image_the_template_did_not_draw_takes_htmlexporters_path_and_is_described():
    # A course that lets its students' HTML keep images: nbconvert's own pass gives them their text.
    allow_images = {"SanitizeHTML": {"tags": ["img"], "attributes": {"img": ["src"]}}}
    html = _page([_test_cell(_display({"text/html": '<img src="loss.png">'}))], **allow_images)
    (image,) = _images(html)
    assert image["src"] == "loss.png" and image["alt"]


def test_htmlexporters_pass_is_needed_for_an_image_without_text_or_a_lab_cell_alone():
    assert not left_for_htmlexporter('<p><img src="a.png" alt=""></p><IMG SRC=b ALT=b>')
    assert left_for_htmlexporter('<p><img src="a.png" title="alt=x"></p>')
    assert left_for_htmlexporter('<img\nsrc="a.png">')
    assert left_for_htmlexporter('<div class="jp-Notebook"></div>')


# A written answer that names the page's own ids, links to script, leaves a tag open past its
# math and shows an image of the reader's own server (fetched with their cookies: a logout).
HEADINGS_NAMED_AFTER_TESTS = "###### test_square_sum_grad\n\n###### answer_x\n\ntext"
MISPLACED_MARKDOWN = (
    "[out](../../../logout) [hub](/hub/logout) [again](https:../logout) [site](https://pytorch.org/docs) [top](#toc) "
    '[click](javascript:window.__pwned=9) [r][1] x <a href="https://example.org/">link $</a>$ '
    "<b>bold `</b>` ![](../../../logout)\n\n[1]: javascript:window.__pwned=10"
)
# Output metadata nbconvert's templates read as mappings, given as text; an image output naming
# an address of the reader's own server as its file.
ODD_METADATA_OUTPUTS = (
    nbformat.v4.new_output("display_data", data={"image/png": ONE_PIXEL_PNG}, metadata={"image/png": "x"}),
    nbformat.v4.new_output("display_data", data={"text/html": "<b>b</b>"}, metadata={"text/html": "s"}),
    nbformat.v4.new_output(
        "display_data", data={"image/png": ONE_PIXEL_PNG}, metadata={"filenames": {"image/png": "/hub/logout"}}
    ),
)
MISSING_ATTACHMENT = "see ![plot](attachment:nope.png)"
EMPTY_ATTACHMENT = "see ![plot](attachment:a.png)"
DEEP_MARKUP = "<ul><li>" * (MAX_MARKUP_DEPTH // 2 + 1) + "deep"


def odd_cells():
    """Cells whose metadata nbconvert's templates read in another shape, and markup nested deeper than a page needs."""
    transient = nbformat.v4.new_markdown_cell("a cell with transient text", metadata={"transient": "x"})
    raw = nbformat.v4.new_raw_cell("raw text", metadata={"raw_mimetype": None})
    attached = nbformat.v4.new_markdown_cell(EMPTY_ATTACHMENT, attachments={"a.png": {}})
    return [transient, raw, attached, nbformat.v4.new_markdown_cell(DEEP_MARKUP)]


def _rendered_markdown(html, marker):
    """The HTML of the rendered markdown holding `marker`, up to the end of its cell's own box."""
    start = html.rindex('rendered_html">', 0, html.index(marker))
    return html[start : html.index("</div>", start)]


def markup_stays_in_place(html):
    """What both pages promise about a notebook's markdown and odd outputs (MISPLACED_MARKDOWN and the rest)."""
    answer = _rendered_markdown(html, "link $")
    for tag in ("a", "b", "code", "p"):
        assert answer.count(f"<{tag}>") + answer.count(f"<{tag} ") == answer.count(f"</{tag}>"), tag
    body = _body(html)
    assert "javascript:" not in body
    images = [image for image in _images(html) if "logout" in str(image) or not image.get("src")]
    assert images and all(not image.get("src") for image in images)
    assert all(image.get("src", "").startswith("data:image/") for image in _images(html) if image.get("src"))
    assert "see ![plot](attachment:nope.png)" in html and "see ![plot](attachment:a.png)" in html
    links = {link.get_text(): link.get("href") for link in BeautifulSoup(answer, features="html.parser").find_all("a")}
    assert links["out"] is links["hub"] is links["again"] is None
    assert (links["site"], links["top"]) == ("https://pytorch.org/docs", "#toc")
    assert "a cell with transient text" in html and "raw text" in html
    assert "&lt;ul&gt;&lt;li&gt;" in html and "<ul><li><ul>" not in html  # the deep markup is text


def _markdown_cells(*sources):
    return [nbformat.v4.new_markdown_cell(source) for source in sources]


def test_a_heading_of_the_students_takes_no_id_of_the_pages_own():
    html = _page([*_markdown_cells(HEADINGS_NAMED_AFTER_TESTS), _test_cell()])
    assert html.count('id="test_square_sum_grad"') <= 1
    assert not re.search(r"<h6[^>]*\sid=", html)


def test_markdown_stays_in_its_cell_links_to_no_script_and_fetches_nothing_and_odd_outputs_still_draw():
    cells = [*_markdown_cells(MISPLACED_MARKDOWN, MISSING_ATTACHMENT), *odd_cells()]
    html = _page([*cells, _test_cell(*ODD_METADATA_OUTPUTS)])
    markup_stays_in_place(html)
    assert 'class="output_png' in html and "<b>b</b>" in html  # both odd outputs are drawn


def test_markup_depth_counts_open_tags_and_passes_over_empty_ones():
    assert markup_depth("<ul><li>" * 3) == 6
    assert markup_depth("<p>a<br>b<img src=x/></p><p>c</p>") == 1
    assert markup_depth("a < b and c > d, $x<y$") == 0


ISOLATED_HTML = nbformat.v4.new_output(
    "display_data", data={"text/html": "<b>apart</b>"}, metadata={"text/html": {"isolated": True}}
)


def test_html_kept_apart_from_the_page_is_drawn_in_a_frame_with_a_title():
    html = _page([_test_cell(ISOLATED_HTML, _display({"text/html": "<i>inline</i>"}))])
    (frame,) = BeautifulSoup(html, features="html.parser").select("iframe")
    assert frame["title"] and frame["src"].startswith("data:text/html;base64,")
    assert "<i>inline</i>" in html


SHARED_CODE = "y = (x * 2).sum()\ny.backward()"
SHARED_TEXT = "Compute $y$ from **x**, then its gradient."


def _students_notebook(answer):
    return [nbformat.v4.new_markdown_cell(SHARED_TEXT), nbformat.v4.new_code_cell(SHARED_CODE), _test_cell(), answer]


def test_a_cell_the_class_shares_is_drawn_once_and_each_page_is_the_page_drawn_alone(monkeypatch):
    drawn_code, drawn_text = Counter(), Counter()
    highlight, markdown = Highlight2HTML.__call__, feedback_page.markdown_html
    monkeypatch.setattr(
        Highlight2HTML, "__call__", lambda self, code, *a: drawn_code.update([code]) or highlight(self, code, *a)
    )
    monkeypatch.setattr(
        feedback_page, "markdown_html", lambda text, *a: drawn_text.update([text]) or markdown(text, *a)
    )
    ada = _students_notebook(nbformat.v4.new_code_cell("answer_of_ada = 1"))
    ben = _students_notebook(nbformat.v4.new_markdown_cell("written by ben"))
    exporter = _exporter()
    pages = [_page(ada, exporter), _page(ben, exporter)]
    assert drawn_code == {SHARED_CODE: 1, "check()": 1, "answer_of_ada = 1": 1}
    assert drawn_text == {SHARED_TEXT: 1, "written by ben": 1}
    assert pages == [_page(ada), _page(ben)]
    assert "answer_of_ada" in pages[0] and "answer_of_ada" not in pages[1] and "written by ben" in pages[1]


def test_the_same_markdown_showing_an_attachment_shows_each_cells_own():
    exporter, source = _exporter(), "see ![plot](attachment:a.png)"
    pages = [
        _page([nbformat.v4.new_markdown_cell(source, attachments={"a.png": {"image/png": data}})], exporter)
        for data in ("QUJD", "REVG")
    ]
    assert "base64,QUJD" in pages[0] and "base64,REVG" in pages[1]
