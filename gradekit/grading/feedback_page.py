"""The feedback page a student reads: nbgrader's page, with diagnoses that wrap, a summary line
per graded cell naming what its check found, and math typeset without the network.

Nothing a student wrote is active in it: their markdown and their outputs' HTML, SVG and
markdown are sanitized (scripts and event handlers made inert, JavaScript outputs dropped),
and a Content-Security-Policy lets only the page's own scripts run, named by their hashes.

nbgrader_config.py makes this nbgrader's feedback exporter. Like preprocessors.py, the module
imports nothing of the kit: the configuration loads it by its path.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import nbgrader
from bs4 import BeautifulSoup
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import escape
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbconvert.preprocessors import Preprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat import NotebookNode

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "feedback_templates")
PAGE_STYLE = os.path.join(TEMPLATES, "feedback_page", "page.css")
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")
SHARED_TEMPLATES = os.path.join(HERE, "page_templates")  # what this page and formgrader's draw alike

# How our checks open a diagnosis: "[misconception: <id>] <what went wrong>".
MISCONCEPTION_TAG = re.compile(r"\A\[misconception: ([^\]]+)\]\s*")
STDERR_FINDING = "wrote to stderr, which nbgrader scores as a failed test"

INLINE_SCRIPT = re.compile(r"<script(?: type=\"text/javascript\")?>(.*?)</script>", re.DOTALL)
HEAD = "<head>"
# A tag HTMLExporter would still have to mend: an image without alternative text, or the lab
# template's cells it makes focusable (the template draws neither; see FeedbackPage._drawn).
IMAGE_TAG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
HAS_ALT = re.compile(r"\salt\s*=", re.IGNORECASE)
LAB_CELLS = "jp-Notebook"
BARE_HTML = "<html>"  # nbgrader's template names no language; a screen reader then guesses one
# Deeper than any page of the course's needs; the sanitizer's time grows with the depth's square.
MAX_MARKUP_DEPTH = 64
# A tag as a reader of tags sees it; `[^<>]` keeps each match short, so a flood of "<a" reads in linear time.
TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^<>]*?(/?)>")
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
# The only images a notebook's markdown may show: its own, carried in the page (attachments become these).
EMBEDDED_IMAGE = re.compile(r"\Adata:image/", re.IGNORECASE)
# The only links it may keep: to another site, a mail address, a place on the page. A path of the
# reader's own server (its logout, say) is one click from doing what it names with their cookies.
OUTSIDE_LINK = re.compile(r"\A(?:https?://|mailto:|#)", re.IGNORECASE)
# MathJax 2 runs its configuration block with eval and sets inline styles; the page inlines its CSS.
# Scripts come from files beside the page or the server, or are the template's own, by hash.
POLICY = (
    "default-src 'none'; script-src 'self' file: 'unsafe-eval' {hashes}; style-src 'self' file: 'unsafe-inline'; "
    "img-src 'self' file: data:; font-src 'self' file: data:; connect-src 'self' file:; "
    "object-src 'none'; base-uri 'none'; form-action 'none'"
)
# How many drawn cells one exporter keeps. A class's notebooks share most of their cells (the
# instructions, the starter code, the tests), and drawing their code and markdown is most of a
# page's cost; kept, a cell shared by the class is drawn once per run, not once per student.
CELLS_REMEMBERED = 4096


def diagnosis_line(cell: NotebookNode) -> str:
    """What a graded cell that lost points found, on one line; empty when it lost none or says nothing."""
    grading = cell.get("metadata", {}).get("nbgrader", {})
    if (grading.get("score") or 0) >= (grading.get("points") or 0):
        return ""
    outputs = cell.get("outputs", [])
    findings = [_error_finding(output) for output in outputs if output.get("output_type") == "error"]
    if not findings and any(output.get("name") == "stderr" for output in outputs):
        findings = [STDERR_FINDING]
    return " ".join(" ".join(finding.split()) for finding in findings)


def _error_finding(error: NotebookNode) -> str:
    """`<misconception>: <message>` for our diagnoses, `<error type>: <message>` for anything else."""
    message = error.get("evalue", "")
    tag = MISCONCEPTION_TAG.match(message)
    if tag:
        return f"{tag.group(1)}: {message[tag.end() :]}"
    return f"{error.get('ename', 'Error')}: {message}"


def script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


def security_policy(own_page: str) -> str:
    """The page's Content-Security-Policy: inline scripts run only if `own_page` (the page drawn
    from no student content) holds them too."""
    hashes = sorted({script_hash(script) for script in INLINE_SCRIPT.findall(own_page)})
    return POLICY.format(hashes=" ".join(hashes))


def with_policy(html: str, policy: str) -> str:
    """`html` with its policy as the first element of its head, before any content could run."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy}"/>'
    if HEAD not in html:
        raise ValueError("the feedback page has no <head> to carry its Content-Security-Policy")
    return html.replace(HEAD, HEAD + "\n" + meta, 1)


@pass_context
def notebook_markdown(context: Context, source: str) -> str:
    """A notebook's markdown (a cell's, or an output's) as HTML that stays in its place on the page.

    nbconvert's own filter gives headings the ids the page's own elements use (formgrader finds a
    cell's score box by its grade id, so a heading named after a test took over that test's box),
    keeps javascript: links, and leaves a tag the sanitizer kept but the markdown split unclosed,
    so it ran on over the cells after it. Here headings have no id, harmful links are dropped,
    every tag the fragment opens is closed in it, an image that is not carried in the notebook
    itself has no address (one on the reader's own server would be fetched with their cookies),
    and a link keeps its address only to another site, a mail address or a place on the page.
    """
    return markdown_html(source, context.get("cell", {}).get("attachments", {}))


def markdown_html(source: str, attachments: dict) -> str:
    """`notebook_markdown` of `source` in a cell carrying `attachments`."""
    renderer = IPythonRenderer(
        escape=False, allow_harmful_protocols=False, exclude_anchor_links=True, attachments=attachments
    )
    try:
        return settled(MarkdownWithMath(renderer=renderer).render(source))
    except Exception:  # an image of an attachment the notebook lacks, say: the text as it was written
        return f"<pre>{html_text(source)}</pre>"


def markdown_html_alone(source: str) -> str:
    """`notebook_markdown` of `source` in a cell without attachments."""
    return markdown_html(source, {})


def html_text(text: str) -> str:
    """`text` shown as it is, none of it read as markup."""
    return str(escape(text))


def settled(html: str) -> str:
    """`html` as a tree serializes it, each tag it opens closed inside it; an image's address that
    is not the notebook's own, and a link's that leads into the reader's own server, dropped."""
    fragment = BeautifulSoup(html, features="html.parser")
    for image in fragment.find_all("img"):
        if not EMBEDDED_IMAGE.match(str(image.get("src", ""))):
            del image["src"]
    for link in fragment.find_all("a"):
        if link.has_attr("href") and not OUTSIDE_LINK.match(str(link["href"]).strip()):
            del link["href"]
    return str(fragment)


class MetadataAsTemplatesRead(Preprocessor):
    """Every metadata value nbconvert's templates read has the shape they read it as.

    A notebook may put any JSON there: a string for an output's metadata or a cell's `transient`,
    a number for a raw cell's type, an empty attachment made the templates fail on the whole page,
    so the student's feedback and the TA's grading page were not drawn at all. What has another
    shape is dropped: the templates then draw the cell as they would without it.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
        if not isinstance(cell.metadata.get("transient", {}), dict):
            del cell.metadata["transient"]
        if not isinstance(cell.metadata.get("raw_mimetype", ""), str):
            del cell.metadata["raw_mimetype"]
        if "attachments" in cell:
            cell.attachments = {name: bundle for name, bundle in cell.attachments.items() if _an_image_bundle(bundle)}
        for output in cell.get("outputs", []):
            if "metadata" in output and not isinstance(output.metadata, dict):
                output.metadata = NotebookNode()
            per_type = [key for key in output.get("metadata", {}) if "/" in key]
            for key in per_type:
                if not isinstance(output.metadata[key], dict):
                    del output.metadata[key]
        return cell, resources


def _an_image_bundle(bundle: object) -> bool:
    """An attachment as the markdown filter reads it: at least one type, each with its data as text."""
    return isinstance(bundle, dict) and bool(bundle) and all(isinstance(data, str) for data in bundle.values())


class ShallowMarkup(Preprocessor):
    """Markup nested deeper than a page needs is shown as text, before the sanitizer reads it.

    The sanitizer's time grows with the square of the nesting: a markdown cell of 160 KB of
    nested list items took three minutes, on every view of formgrader's page. A written answer or
    an output holding markup nested deeper than `MAX_MARKUP_DEPTH` is escaped whole instead.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
        if cell.cell_type in ("markdown", "raw") and markup_depth(cell.source) > MAX_MARKUP_DEPTH:
            cell.source = html_text(cell.source)
        for output in cell.get("outputs", []):
            for kind in ("text/html", "text/markdown"):
                data = output.get("data", {}).get(kind)
                if isinstance(data, str) and markup_depth(data) > MAX_MARKUP_DEPTH:
                    output.data[kind] = html_text(data)
        return cell, resources


def markup_depth(html: str) -> int:
    """How deep `html`'s tags nest, counted as a reader of tags would (a tag left open counts as open)."""
    depth = deepest = 0
    for closing, name, self_closing in TAG.findall(html):
        if self_closing or name.lower() in VOID_TAGS:
            continue
        depth = max(depth - 1, 0) if closing else depth + 1
        deepest = max(deepest, depth)
    return deepest


def left_for_htmlexporter(html: str) -> bool:
    """Whether `html` holds anything HTMLExporter's last pass would change: an image without
    alternative text or a lab-template cell."""
    images = IMAGE_TAG.findall(html)
    return LAB_CELLS in html or any(not HAS_ALT.search(image) for image in images)


def with_language(html: str, language: str) -> str:
    """`html` whose root element states the page's language, so that it is read out in that language."""
    return html.replace(BARE_HTML, f'<html lang="{language}">', 1)


class FeedbackPage(HTMLExporter):
    """nbgrader's feedback page drawn by the course's template (gradekit/grading/feedback_templates)."""

    def __init__(self, **kwargs: Any) -> None:
        # nbgrader names its own template in the HTMLExporter section (its API insists on it);
        # keyword arguments outrank the configuration, so the page's own template is named here.
        kwargs.update(template_name="feedback_page", extra_template_basedirs=[TEMPLATES, NBGRADER_TEMPLATES])
        super().__init__(**kwargs)
        # Lets our template extend nbgrader's by the name 'feedback/index.html.j2' and import the
        # shared macros (page_templates/); the search path was worked out while the exporter
        # started, so it is worked out again.
        self.extra_template_paths = [*self.extra_template_paths, NBGRADER_TEMPLATES, SHARED_TEMPLATES]
        self.template_paths = self._template_paths()
        self._code_drawn = functools.lru_cache(maxsize=CELLS_REMEMBERED)(self._code)
        self._markdown_drawn = functools.lru_cache(maxsize=CELLS_REMEMBERED)(markdown_html_alone)
        self._preprocessed = NotebookNode()  # the notebook the last page was drawn from, as its steps left it

    def default_filters(self) -> Iterator[tuple[str, Callable[..., Any]]]:
        yield from super().default_filters()
        yield ("diagnosis_line", diagnosis_line)
        yield ("markdown2html", notebook_markdown)

    def from_notebook_node(  # type: ignore[override]  # Exporter declares a notebook back; an HTML page is text
        self, nb: NotebookNode, resources: dict[str, Any] | None = None, **kw: Any
    ) -> tuple[str, dict[str, Any]]:
        """The page, carrying a policy that trusts only the scripts of a page drawn without `nb`'s cells."""
        given = copy.deepcopy(resources)
        html, resources = self._drawn(nb, resources, **kw)
        if left_for_htmlexporter(html):
            html, resources = super().from_notebook_node(nb, given, **kw)
            own_page, _ = super().from_notebook_node(_cells_removed(nb), dict(resources), **kw)
        else:
            own_page = self._without_cells(resources)
        return with_language(with_policy(html, security_policy(own_page)), self.language_code), resources

    def _without_cells(self, resources: dict[str, Any]) -> str:
        """The page just drawn, drawn again without its cells: what the template itself puts in a page.

        It is drawn from what the page's steps made (the notebook's metadata as they left it, and their
        resources), so the steps, gradebook queries among them, run once per page, not twice.
        """
        return self.template.render(nb=_cells_removed(self._preprocessed), resources=dict(resources)).lstrip("\r\n")

    def _drawn(
        self, nb: NotebookNode, resources: dict[str, Any] | None = None, **kw: Any
    ) -> tuple[str, dict[str, Any]]:
        """The page as the template draws it. HTMLExporter then parses it again with BeautifulSoup
        (most of a page's cost) to give images alternative text and lab cells a tabindex; this
        template draws every image with its text and no lab cell (the course's sanitizer lets no
        tag of the student's through but a, abbr, acronym, b, blockquote, code, em, i, li, ol,
        strong, ul), and `from_notebook_node` takes HTMLExporter's path whenever it finds one."""
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name"))
        self.register_filter("highlight_code", self.filters.get("highlight_code") or self._code_filter(lexer))
        if self.filters.get("markdown2html", notebook_markdown) is notebook_markdown:
            self.register_filter("markdown2html", self._markdown_filter())
        resources = self._init_resources(resources)
        data_types = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources)
        self.register_filter("filter_data_type", data_types)
        return TemplateExporter.from_notebook_node(self, nb, resources, **kw)

    def _code_filter(self, lexer: str | None) -> Callable[..., str]:
        """HTMLExporter's `highlight_code` for a notebook in `lexer`'s language, each cell's code drawn once."""

        def highlight_code(source: str, language: str | None = None, metadata: dict | None = None) -> str:
            magics = metadata.get("magics_language") if isinstance(metadata, dict) else None
            if all(isinstance(key, str) or key is None for key in (lexer, source, language, magics)):
                return self._code_drawn(lexer, source, language, magics)
            return self._code(lexer, source, language, magics, metadata)

        return highlight_code

    def _code(
        self, lexer: str | None, source: str, language: str | None, magics: str | None, metadata: object = None
    ) -> str:
        """What Highlight2HTML draws: the cell's `magics_language` is all it reads of the cell's metadata."""
        if magics is not None:
            metadata = {"magics_language": magics}
        return Highlight2HTML(pygments_lexer=lexer, parent=self)(source, language, metadata)

    def _markdown_filter(self) -> Callable[..., str]:
        """`notebook_markdown`, each markdown without attachments drawn once."""

        @pass_context
        def markdown2html(context: Context, source: str) -> str:
            attachments = context.get("cell", {}).get("attachments", {})
            if attachments or not isinstance(source, str):
                return markdown_html(source, attachments)
            return self._markdown_drawn(source)

        return markdown2html

    def _preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        """After nbgrader's steps, make the student's markup inert and add the page's own styles."""
        nb, resources = super()._preprocess(nb, resources)
        for step in (ShallowMarkup, SanitizeHTML, MetadataAsTemplatesRead):
            nb, resources = step(parent=self, enabled=True)(nb, resources)
        with open(PAGE_STYLE) as style:
            resources.setdefault("inlining", {}).setdefault("css", []).append(style.read())
        self._preprocessed = nb
        return nb, resources


def _cells_removed(nb: NotebookNode) -> NotebookNode:
    """A shallow copy of `nb` with no cells: what a page shows of the notebook beyond them."""
    empty = nb.copy()
    empty.cells = []
    return empty
