"""What `gradekit mutants` shows: a table per notebook in the terminal, and an HTML page with every survivor's diff."""

from __future__ import annotations

from pathlib import Path

from gradekit.core.html_page import Html, element, join, page, table
from gradekit.mutation.equivalents import REQUIRED_SCORE, NotebookScore, Review
from gradekit.mutation.runner import MutantResult

COLUMNS = ("notebook", "mutants", "killed", "equivalent", "tolerated", "unreviewed", "score")


def score_rows(scores: tuple[NotebookScore, ...]) -> list[tuple]:
    rows = [
        (s.notebook, s.mutants, s.killed, s.equivalent, s.tolerated, s.unreviewed, f"{s.score:.1%}") for s in scores
    ]
    total = NotebookScore("all", *(sum(getattr(s, f) for s in scores) for f in COLUMNS[1:6]))
    rows.append(
        (
            total.notebook,
            total.mutants,
            total.killed,
            total.equivalent,
            total.tolerated,
            total.unreviewed,
            f"{total.score:.1%}",
        )
    )
    return rows


def score_table(scores: tuple[NotebookScore, ...]) -> str:
    rows = [COLUMNS] + [tuple(str(v) for v in row) for row in score_rows(scores)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def survivor_lines(results: tuple[MutantResult, ...], reviews: dict[str, Review]) -> list[str]:
    """One block per survivor the course has not accepted as equivalent: id, verdict, diff."""
    blocks = []
    for result in results:
        review = reviews.get(result.mutant.id)
        if result.killed or (review and review.verdict == "equivalent"):
            continue
        verdict = review.verdict if review else "UNREVIEWED"
        blocks.append(f"{result.mutant.id} [{result.mutant.operator}, {verdict}]\n{result.mutant.diff.rstrip()}")
    return blocks


def write_html(
    path: Path, scores: tuple[NotebookScore, ...], results: tuple[MutantResult, ...], reviews: dict[str, Review]
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_page(scores, results, reviews))
    return path


def _page(scores, results, reviews) -> str:
    rows = score_rows(scores)
    low = ["flagged" if float(row[-1].rstrip("%")) / 100 < REQUIRED_SCORE else "" for row in rows]
    survivors = [_survivor(r, reviews.get(r.mutant.id)) for r in results if not r.killed]
    return page(
        "Mutation adequacy",
        join(
            [
                element("h1", "Mutation adequacy of the hidden tests"),
                element(
                    "p",
                    "Each mutant is a reference function with one change; it is killed when a test cell the "
                    f"reference passes fails. The bar: at least {REQUIRED_SCORE:.0%} of the mutants that are not "
                    "equivalent killed, in every notebook.",
                ),
                table(list(COLUMNS), [list(row) for row in rows], numeric=set(range(1, len(COLUMNS))), row_classes=low),
                element("h2", "Survivors"),
                join(survivors) if survivors else element("p", "None."),
            ]
        ),
    )


def _survivor(result: MutantResult, review: Review | None) -> Html:
    verdict = review.verdict if review else "unreviewed"
    reason = review.reason if review else "Not reviewed: kill it with a check or review it."
    diff = "\n".join(result.mutant.diff.splitlines()[2:])
    return join(
        [
            element("h3", f"{result.mutant.id} ({result.mutant.operator}, {verdict})"),
            element("p", reason, class_="muted"),
            element("pre", diff),
        ]
    )
