"""similarity.html: the pairs of submissions whose answers are most alike, matched code side by side."""
from __future__ import annotations

import os
from pathlib import Path

from copydetect.defaults import DISPLAY_THRESHOLD
from copydetect.utils import highlight_overlap

from gradekit.report.answer_text import notebooks_text, student_texts
from gradekit.report.html_page import Html, element, join, page, table
from gradekit.report.similarity import SimilarPair, quiet, rank_pairs

PAGE_NAME = "similarity.html"
TOP_PAIRS = 15
CONTEXT_LINES = 6  # lines kept around each matched region; the rest is elided

SIDE_BY_SIDE = Html(
    "<style>.sides{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.8em}"
    ".sides pre{background:#fff;border:1px solid #dde2e8;border-radius:6px;padding:.5em;overflow-x:auto;"
    "font-size:.85em;margin:0}.sides h3{font-size:1em;margin:.2em 0}mark{background:#ffd54f}</style>\n"
)


def similarity_page(pairs: list[SimilarPair], texts: dict[str, str], unreadable: dict[str, str]) -> str:
    shown = [pair for pair in pairs if pair.score >= DISPLAY_THRESHOLD][:TOP_PAIRS]
    intro = element(
        "p",
        f"{len(texts)} submissions, {len(texts) * (len(texts) - 1) // 2} pairs compared on their answer cells; "
        f"the starter code of the release is not counted. Pairs sharing at least {DISPLAY_THRESHOLD:.0%} "
        "of one side's code are listed, most alike first. Alike is not proof: read the code.",
        class_="muted",
    )
    body = [SIDE_BY_SIDE, element("h1", "Similar submissions"), intro, _ranking(shown)]
    body += [_pair_section(rank, pair, texts) for rank, pair in enumerate(shown, start=1)]
    if unreadable:
        body.append(element("h2", "Not compared (notebooks unreadable)"))
        body.append(table(["student", "why"], [[s, why] for s, why in sorted(unreadable.items())]))
    return page("Similar submissions", join(body))


def _ranking(shown: list[SimilarPair]) -> Html:
    if not shown:
        return element("p", "No pair of submissions is suspiciously alike.")
    rows = [
        [rank, element("a", f"{pair.first} and {pair.second}", href=f"#pair-{rank}"), f"{pair.score:.0%}",
         f"{pair.shares[0]:.0%} / {pair.shares[1]:.0%}"]
        for rank, pair in enumerate(shown, start=1)
    ]
    return table(["rank", "pair", "score", "share of each side"], rows, numeric={0, 2})


def _pair_section(rank: int, pair: SimilarPair, texts: dict[str, str]) -> Html:
    sides = [_side(student, texts[student], slices) for student, slices in zip((pair.first, pair.second), pair.slices)]
    heading = element("h2", f"{rank}. {pair.first} and {pair.second}: {pair.score:.0%}", id=f"pair-{rank}")
    return join([heading, element("div", join(sides), class_="sides")])


def _side(student: str, text: str, slices) -> Html:
    with quiet():
        marked, _ = highlight_overlap(text, slices, "<mark>", "</mark>", truncate=CONTEXT_LINES, escape_html=True)
    return element("div", join([element("h3", student), Html(f"<pre>{marked}</pre>")]))


def write_similarity_report(submitted_dir: Path, release_dir: Path, assignment: str, folder: Path) -> Path:
    """Compare every submission of `assignment` and write the page into `folder`, whole or not at all."""
    texts, unreadable = student_texts(submitted_dir, assignment)
    starter = notebooks_text(sorted(Path(release_dir).glob("*.ipynb")))
    html = similarity_page(rank_pairs(texts, starter), texts, unreadable)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / PAGE_NAME
    partial = folder / f".{PAGE_NAME}.partial"
    partial.write_text(html, encoding="utf-8")
    os.replace(partial, target)
    return target
