"""similarity.html: the pairs of submissions whose answers are most alike, matched code side by side."""

from __future__ import annotations

from pathlib import Path

from copydetect.defaults import DISPLAY_THRESHOLD
from copydetect.utils import highlight_overlap

from gradekit.core.atomic_files import atomic_write
from gradekit.core.html_page import Html, element, join, page, table
from gradekit.report.answer_text import starter_texts
from gradekit.report.similarity import SimilarPair, quiet, rank_notebooks
from gradekit.report.submitted_texts import submitted_texts
from gradekit.report.written_similarity import rank_written, written_starters

PAGE_NAME = "similarity.html"
TOP_PAIRS = 15
CONTEXT_LINES = 6  # lines kept around each matched region; the rest is elided

SIDE_BY_SIDE = Html(
    "<style>.sides{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.8em}"
    ".sides pre{background:#fff;border:1px solid #dde2e8;border-radius:6px;padding:.5em;overflow-x:auto;"
    "font-size:.85em;margin:0}.sides h3{font-size:1em;margin:.2em 0}mark{background:#ffd54f}</style>\n"
)


def similarity_page(pairs: list[SimilarPair], texts: dict[str, dict[str, str]], unreadable: dict[str, str]) -> str:
    shown = [pair for pair in pairs if pair.score >= DISPLAY_THRESHOLD][:TOP_PAIRS]
    students = {student for by_student in texts.values() for student in by_student}
    intro = element(
        "p",
        f"{len(students)} students' answer cells compared pair by pair, notebook by notebook: code by its "
        'fingerprints, written answers (marked "(written)") by the runs of five words they share; the starter '
        "code and text of the release, the model answer (when the source notebooks are at hand), docstrings and "
        f"a line or two in common are not counted. Pairs sharing at least {DISPLAY_THRESHOLD:.0%} "
        f"of one side's answers in a notebook are listed (at most {TOP_PAIRS}), most alike first, code and written "
        "answers in one ranking. Alike is not proof: read the answers.",
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
        [
            rank,
            element("a", f"{pair.first} and {pair.second}", href=f"#pair-{rank}"),
            pair.notebook,
            f"{pair.score:.0%}",
            f"{pair.shares[0]:.0%} / {pair.shares[1]:.0%}",
        ]
        for rank, pair in enumerate(shown, start=1)
    ]
    return table(["rank", "pair", "notebook", "score", "share of each side"], rows, numeric={0, 3})


def _pair_section(rank: int, pair: SimilarPair, texts: dict[str, dict[str, str]]) -> Html:
    notebook = texts[pair.notebook]
    slices = pair.slices or ((), ())  # written answers carry no located matches
    sides = [_side(student, notebook[student], found) for student, found in zip((pair.first, pair.second), slices)]
    heading = element(
        "h2", f"{rank}. {pair.first} and {pair.second}, {pair.notebook}: {pair.score:.0%}", id=f"pair-{rank}"
    )
    return join([heading, element("div", join(sides), class_="sides")])


# A side's box scrolls sideways when a line is wider than it: it takes the keyboard's focus, so
# that someone without a mouse can scroll it too.
SCROLLING_BOX = '<pre tabindex="0">'


def _side(student: str, text: str, slices) -> Html:
    if len(slices) == 0:  # a written answer: shown whole, its shared runs are not located
        return element("div", join([element("h3", student), element("pre", text, tabindex="0")]))
    with quiet():
        marked, _ = highlight_overlap(text, slices, "<mark>", "</mark>", truncate=CONTEXT_LINES, escape_html=True)
    return element("div", join([element("h3", student), Html(f"{SCROLLING_BOX}{marked}</pre>")]))


def write_similarity_report(
    submitted_dir: Path, release_dir: Path, assignment: str, folder: Path, source_dir: Path | None = None
) -> Path:
    """Compare every submission of `assignment` and write the page into `folder`, whole or not at all.

    With `source_dir` (the source notebooks), code that is the model answer is set aside like the starter code.
    """
    starters = starter_texts(release_dir)
    submitted = submitted_texts(submitted_dir, assignment, starters)  # the release's notebooks only
    texts, written, unreadable = submitted.code, submitted.written, submitted.unreadable
    if source_dir is not None:
        models = starter_texts(source_dir)
        starters = {name: text + "\n" + models.get(name, "") for name, text in starters.items()}
    pairs = rank_notebooks(texts, starters) + rank_written(written, written_starters(release_dir))
    ranked = sorted(pairs, key=lambda pair: (-pair.score, pair.notebook, pair.first, pair.second))
    html = similarity_page(ranked, texts | written, unreadable)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / PAGE_NAME
    atomic_write(target, html.encode("utf-8"))
    return target
