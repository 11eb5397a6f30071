"""What `gradekit mutants` shows: a table per notebook in the terminal, and an HTML page with every survivor's diff."""
from __future__ import annotations

import html
from pathlib import Path

from gradekit.mutation.equivalents import REQUIRED_SCORE, NotebookScore, Review
from gradekit.mutation.runner import MutantResult

COLUMNS = ("notebook", "mutants", "killed", "equivalent", "tolerated", "unreviewed", "score")


def score_rows(scores: tuple[NotebookScore, ...]) -> list[tuple]:
    rows = [(s.notebook, s.mutants, s.killed, s.equivalent, s.tolerated, s.unreviewed, f"{s.score:.1%}") for s in scores]
    total = NotebookScore("all", *(sum(getattr(s, f) for s in scores) for f in COLUMNS[1:6]))
    rows.append((total.notebook, total.mutants, total.killed, total.equivalent, total.tolerated, total.unreviewed, f"{total.score:.1%}"))
    return rows


def score_table(scores: tuple[NotebookScore, ...]) -> str:
    rows = [COLUMNS] + [tuple(str(v) for v in row) for row in score_rows(scores)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))) for row in rows]
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


def write_html(path: Path, scores: tuple[NotebookScore, ...], results: tuple[MutantResult, ...], reviews: dict[str, Review]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_page(scores, results, reviews))
    return path


def _page(scores, results, reviews) -> str:
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    body = "".join(_score_row(row) for row in score_rows(scores))
    survivors = "".join(_survivor(r, reviews.get(r.mutant.id)) for r in results if not r.killed)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Mutation adequacy</title>
<style>
body {{ font: 15px/1.45 system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #222; }}
table {{ border-collapse: collapse; }} th, td {{ padding: .25rem .7rem; border-bottom: 1px solid #ddd; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }} .low {{ color: #b00020; font-weight: 600; }}
pre {{ background: #f6f8fa; padding: .6rem; white-space: pre-wrap; }} .add {{ color: #116329; }} .del {{ color: #b00020; }}
section {{ border-left: 4px solid #ccc; padding-left: .8rem; margin: 1.2rem 0; }}
section.unreviewed {{ border-color: #b00020; }} section.tolerated {{ border-color: #d4a017; }}
</style></head><body>
<h1>Mutation adequacy of the hidden tests</h1>
<p>Each mutant is a reference function with one change; it is killed when a test cell the reference passes fails.
The bar: at least {REQUIRED_SCORE:.0%} of the mutants that are not equivalent killed, in every notebook.</p>
<table><tr>{head}</tr>{body}</table>
<h2>Survivors</h2>{survivors or "<p>None.</p>"}
</body></html>
"""


def _score_row(row) -> str:
    low = row[-1] != "100.0%" and float(row[-1].rstrip("%")) / 100 < REQUIRED_SCORE
    cells = "".join(f"<td>{html.escape(str(v))}</td>" for v in row[:-1])
    return f"<tr>{cells}<td class=\"{'low' if low else ''}\">{row[-1]}</td></tr>"


def _survivor(result: MutantResult, review: Review | None) -> str:
    verdict = review.verdict if review else "unreviewed"
    reason = f"<p>{html.escape(review.reason)}</p>" if review else "<p>Not reviewed: kill it with a check or review it.</p>"
    diff = "\n".join(_diff_line(line) for line in result.mutant.diff.splitlines()[2:])
    return (f"<section class=\"{verdict}\"><h3>{html.escape(result.mutant.id)} "
            f"<small>{html.escape(result.mutant.operator)}, {verdict}</small></h3>{reason}<pre>{diff}</pre></section>")


def _diff_line(line: str) -> str:
    kind = {"+": "add", "-": "del"}.get(line[:1])
    escaped = html.escape(line)
    return f"<span class=\"{kind}\">{escaped}</span>" if kind else escaped
