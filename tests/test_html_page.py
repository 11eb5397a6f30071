import pytest

from gradekit.core.html_page import Html, element, folded, link, page, png_image, table

pytestmark = pytest.mark.unit


def test_text_is_escaped_once_and_markup_passes_through():
    inner = element("b", "<x> & y")
    assert inner == "<b>&lt;x&gt; &amp; y</b>" and isinstance(inner, Html)
    assert element("p", inner, class_="note") == '<p class="note"><b>&lt;x&gt; &amp; y</b></p>'


def test_a_link_without_a_target_is_plain_text():
    assert link("ann", "") == "ann"
    assert link("ann", "../feedback/ann/a/x.html") == '<a href="../feedback/ann/a/x.html">ann</a>'


def test_tables_folds_images_and_the_page():
    assert table(["a", "n"], [["x", 1]], numeric={1}, row_classes=["flagged"]) == (
        '<table><tr><th>a</th><th class="number">n</th></tr>\n'
        '<tr class="flagged"><td>x</td><td class="number">1</td></tr>\n</table>\n'
    )
    assert folded("more", "<i>") == "<details><summary>more</summary>&lt;i&gt;</details>\n"
    assert png_image(b"\x89PNG", "a plot") == '<img class="plot" src="data:image/png;base64,iVBORw==" alt="a plot">'
    whole = page("T", element("h1", "T"))
    assert whole.startswith("<!doctype html>") and "<style>" in whole and "<h1>T</h1>" in whole
