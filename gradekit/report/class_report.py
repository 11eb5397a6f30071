"""The class report: what the cohort scored and which misconceptions it showed, for a TA at a glance.

Writes report.html with PNG plots, and CSV files with the same figures:
students.csv, cells.csv (pass rate per test cell), misconceptions.csv.
"""
from __future__ import annotations

import csv
import dataclasses
import html
import os
import tempfile
from pathlib import Path

from gradekit.catalog import Misconception
from gradekit.grading.cohort import CohortRow
from gradekit.grading.status import Status
from gradekit.manifest import Manifest


@dataclasses.dataclass(frozen=True)
class CellStats:
    notebook: str
    cell: str
    graded: int
    passed: int

    @property
    def pass_rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


@dataclasses.dataclass(frozen=True)
class MisconceptionStats:
    id: str
    title: str
    diagnosis: str
    students: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.students)


def cell_stats(manifest: Manifest, rows: tuple[CohortRow, ...]) -> tuple[CellStats, ...]:
    """Pass rate of every test cell over the students whose submission was graded."""
    stats = []
    for entry in manifest.notebooks:
        for test in manifest.test_cells_of(entry.name):
            grades = [r.grades.cell(entry.name, test.cell) for r in rows if r.grades]
            grades = [g for g in grades if g is not None]
            stats.append(CellStats(entry.name, test.cell, len(grades), sum(g.full for g in grades)))
    return tuple(stats)


def misconception_stats(rows: tuple[CohortRow, ...], catalog: dict[str, Misconception]) -> tuple[MisconceptionStats, ...]:
    """Each diagnosed misconception with the students who showed it, most frequent first."""
    students: dict[str, list[str]] = {}
    for row in rows:
        for misconception in row.grades.diagnosed if row.grades else ():
            students.setdefault(misconception, []).append(row.student_id)
    stats = [
        MisconceptionStats(
            id=m,
            title=catalog[m].title if m in catalog else m,
            diagnosis=catalog[m].diagnosis if m in catalog else "",
            students=tuple(sorted(names)),
        )
        for m, names in students.items()
    ]
    return tuple(sorted(stats, key=lambda s: (-s.count, s.id)))


def write_class_report(folder: Path, manifest: Manifest, rows: tuple[CohortRow, ...], catalog: dict[str, Misconception]) -> Path:
    """Write the report files into `folder` (each file replaced atomically); returns report.html."""
    folder.mkdir(parents=True, exist_ok=True)
    cells = cell_stats(manifest, rows)
    misconceptions = misconception_stats(rows, catalog)
    _write_csvs(folder, rows, cells, misconceptions)
    _plot_scores(folder / "score_distribution.png", rows)
    _plot_cells(folder / "cell_pass_rate.png", cells)
    _plot_misconceptions(folder / "misconceptions.png", misconceptions)
    report = folder / "report.html"
    _atomic_write(report, _html(rows, cells, misconceptions).encode())
    return report


def _atomic_write(path: Path, content: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "wb") as stream:
        stream.write(content)
    os.replace(temporary, path)


def _csv_bytes(header: list[str], lines: list[list]) -> bytes:
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(lines)
    return buffer.getvalue().encode()


def _write_csvs(folder, rows, cells, misconceptions) -> None:
    _atomic_write(folder / "students.csv", _csv_bytes(
        ["student_id", "status", "score", "max_score", "misconceptions", "message", "notes"],
        [[r.student_id, r.status, f"{r.score:g}", f"{r.grades.max_score:g}" if r.grades else "",
          " ".join(r.grades.diagnosed) if r.grades else "", r.message, " | ".join(r.notes)] for r in rows],
    ))
    _atomic_write(folder / "cells.csv", _csv_bytes(
        ["notebook", "cell", "graded", "passed", "pass_rate"],
        [[c.notebook, c.cell, c.graded, c.passed, f"{c.pass_rate:.3f}"] for c in cells],
    ))
    _atomic_write(folder / "misconceptions.csv", _csv_bytes(
        ["id", "title", "count", "students"],
        [[m.id, m.title, m.count, " ".join(m.students)] for m in misconceptions],
    ))


def _figure(height: float):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, height))
    return plt, figure, axes


def _save(plt, figure, path: Path) -> None:
    figure.tight_layout()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(handle)
    figure.savefig(temporary, dpi=90)
    plt.close(figure)
    os.replace(temporary, path)


def _plot_scores(path: Path, rows) -> None:
    plt, figure, axes = _figure(3.2)
    scores = [r.score / r.grades.max_score * 100 for r in rows if r.grades and r.grades.max_score]
    axes.hist(scores, bins=[i * 10 for i in range(11)], color="#4c72b0", edgecolor="white")
    axes.set_xlabel("score (% of the points of the submitted notebooks' tests)")
    axes.set_ylabel("students")
    axes.set_title("Score distribution")
    _save(plt, figure, path)


def _plot_cells(path: Path, cells) -> None:
    plt, figure, axes = _figure(max(2.5, 0.28 * len(cells) + 1))
    labels = [f"{c.notebook}/{c.cell}" for c in cells]
    axes.barh(labels, [c.pass_rate * 100 for c in cells], color="#55a868")
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("students with full marks (%)")
    axes.set_title("Pass rate per test cell")
    _save(plt, figure, path)


def _plot_misconceptions(path: Path, misconceptions) -> None:
    plt, figure, axes = _figure(max(2.5, 0.3 * len(misconceptions) + 1))
    axes.barh([m.id for m in misconceptions], [m.count for m in misconceptions], color="#c44e52")
    axes.invert_yaxis()
    axes.set_xlabel("students diagnosed")
    axes.set_title("Misconceptions diagnosed" if misconceptions else "No misconception diagnosed")
    _save(plt, figure, path)


def _html(rows, cells, misconceptions) -> str:
    e = html.escape
    top = misconceptions[:3]
    weakest = sorted((c for c in cells if c.graded), key=lambda c: c.pass_rate)[:3]
    failed = [r for r in rows if r.status is Status.FAILED]
    flagged = [r for r in rows if r.status is Status.FLAGGED]
    top_items = "".join(
        f"<li><b>{e(m.title)}</b> ({e(m.id)}): {m.count} student(s): {e(', '.join(m.students))}<br><small>{e(m.diagnosis)}</small></li>"
        for m in top
    ) or "<li>No misconception was diagnosed.</li>"
    weak_items = "".join(f"<li>{e(c.notebook)} / {e(c.cell)}: {c.pass_rate:.0%} passed</li>" for c in weakest)
    failed_items = "".join(f"<li>{e(r.student_id)}: {e(r.message)}</li>" for r in failed) or "<li>none</li>"
    flagged_items = "".join(
        f"<li>{e(r.student_id)}<ul>{''.join(f'<li>{e(f)}</li>' for f in r.findings)}</ul></li>" for r in flagged
    ) or "<li>none</li>"
    noted_items = "".join(
        f"<li>{e(r.student_id)}<ul>{''.join(f'<li>{e(n)}</li>' for n in r.notes)}</ul></li>" for r in rows if r.notes
    ) or "<li>none</li>"
    student_rows = "".join(
        f"<tr><td>{e(r.student_id)}</td><td>{e(r.status)}</td><td>{r.score:g}</td>"
        f"<td>{e(', '.join(r.grades.diagnosed) if r.grades else '')}</td></tr>"
        for r in rows
    )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Class report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}td,th{{padding:2px 8px;text-align:left}}</style>
</head><body>
<h1>Class report</h1>
<p>{len(rows)} submissions, {len(rows) - len(failed)} graded, {len(failed)} failed to grade,
{len(flagged)} flagged for a TA (grade withheld until a TA reviews it).</p>
<h2>Top problems</h2><ol>{top_items}</ol>
<h2>Weakest test cells</h2><ol>{weak_items}</ol>
<h2>Submissions that could not be graded</h2><ul>{failed_items}</ul>
<h2>Flagged for a TA: possible tampering</h2><ul>{flagged_items}</ul>
<h2>What was set aside or repaired before grading</h2><ul>{noted_items}</ul>
<img src="score_distribution.png" alt="score distribution">
<img src="misconceptions.png" alt="misconceptions diagnosed">
<img src="cell_pass_rate.png" alt="pass rate per test cell">
<h2>Students</h2><table><tr><th>student</th><th>status</th><th>score</th><th>misconceptions</th></tr>{student_rows}</table>
</body></html>
"""
