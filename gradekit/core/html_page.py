"""Small builders for a self-contained HTML page: the style sheet is inline, images are data URIs.

Every builder escapes the text it is given; pieces already built (`Html`) pass through as they are.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Collection, Iterable, Sequence


class Html(str):
    """Markup that is already escaped."""


STYLE = """
body{font:15px/1.45 system-ui,sans-serif;color:#1d2733;background:#f6f7f9;margin:0}
main{max-width:68em;margin:0 auto;padding:1.5em 2em 4em}
h1{font-size:1.7em;margin:.2em 0}h2{font-size:1.25em;margin:1.8em 0 .5em;border-bottom:2px solid #dde2e8}
nav a{margin-right:1.2em}
.headline{display:flex;flex-wrap:wrap;gap:.8em;margin:1em 0}
.figure{background:#fff;border:1px solid #dde2e8;border-radius:8px;padding:.6em 1.1em;min-width:7.5em}
.figure b{display:block;font-size:1.7em}
.figure.warn b{color:#b3261e}
table{border-collapse:collapse;background:#fff;width:100%;font-size:.93em}
th,td{padding:.3em .7em;text-align:left;border-bottom:1px solid #e6e9ee;vertical-align:top}
th{background:#eef1f5}td.number,th.number{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.group td{background:#f1f4f8;font-weight:600}tr.flagged td{background:#fff4e5}
.bar{display:inline-block;height:.8em;background:#c44e52;border-radius:2px;vertical-align:middle}
details{margin:.6em 0}summary{cursor:pointer}
.muted{color:#5d6b7a}.note{font-size:.9em}
img.plot{max-width:100%;background:#fff;border:1px solid #dde2e8;border-radius:8px}
"""


def escape(text: object) -> Html:
    return text if isinstance(text, Html) else Html(html.escape(str(text)))


def element(tag: str, content: object = "", **attributes: str) -> Html:
    """<tag attributes>content</tag>; `class_` stands for `class`."""
    attrs = "".join(f' {name.rstrip("_")}="{html.escape(value)}"' for name, value in attributes.items() if value)
    return Html(f"<{tag}{attrs}>{escape(content)}</{tag}>")


def join(pieces: Iterable[object]) -> Html:
    return Html("".join(escape(piece) for piece in pieces))


def link(text: object, href: str) -> Html:
    return element("a", text, href=href) if href else escape(text)


def bullets(items: Iterable[object]) -> Html:
    return element("ul", join(element("li", item) for item in items))


def folded(summary: object, content: object, open_: bool = False) -> Html:
    attribute = " open" if open_ else ""
    return Html(f"<details{attribute}>{element('summary', summary)}{escape(content)}</details>\n")


def table(
    header: list[str],
    rows: Sequence[Sequence[object]],
    numeric: Collection[int] = frozenset(),
    row_classes: list[str] | None = None,
) -> Html:
    """A table; columns listed in `numeric` align right, `row_classes` styles rows (flagged, group)."""

    def cells(tag: str, values: Sequence[object]) -> Html:
        return join(element(tag, v, class_="number" if i in numeric else "") for i, v in enumerate(values))

    classes = row_classes or [""] * len(rows)
    body = join(Html(f"{element('tr', cells('td', row), class_=style)}\n") for row, style in zip(rows, classes))
    return Html(f"<table>{element('tr', cells('th', header))}\n{body}</table>\n")


def png_image(png: bytes, alt: str) -> Html:
    uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return Html(f'<img class="plot" src="{uri}" alt="{html.escape(alt)}">')


# The kit's report pages run no script at all; their style is inline and their images are data URIs.
# Should a student's text ever slip through unescaped, the browser still runs nothing of it.
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def page(title: str, body: object) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style></head>\n"
        f"<body><main>\n{escape(body)}\n</main></body></html>\n"
    )
