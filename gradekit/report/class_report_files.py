"""Writing the class report's files: the page and the CSV files with the same figures."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from gradekit.core.atomic_files import atomic_write
from gradekit.report.class_figures import ClassReport, decimal
from gradekit.report.class_report_page import report_page
from gradekit.report.item_statistics import ItemStats, WrittenStats

PAGE = "report.html"
ITEM_HEADER = [
    "notebook",
    "exercise",
    "cell",
    "points",
    "submitted",
    "full_marks",
    "share_earned",
    "discrimination",
    "remark",
    "graded_by",  # autograder, or TA for a written answer
    "waiting_for_ta",  # written answers only: answered and not graded yet
    "state",  # written answers only: how far their grading is
]


def csv_bytes(header: list[str], lines: list[list]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(lines)
    return buffer.getvalue().encode()


def write_page(folder: Path, report: ClassReport) -> Path:
    path = folder / PAGE
    atomic_write(path, report_page(report).encode())
    return path


def write_csv_files(folder: Path, report: ClassReport) -> None:
    for name, header, lines in (
        ("students.csv", *student_lines(report)),
        (
            "exercises.csv",
            ITEM_HEADER,
            [item_line(item) for item in report.exercises] + [written_line(item) for item in report.written],
        ),
        ("cells.csv", ITEM_HEADER, [item_line(item) for item in report.cells]),
        ("misconceptions.csv", *misconception_lines(report)),
        ("notes.csv", *note_lines(report)),
    ):
        atomic_write(folder / name, csv_bytes(header, lines))


def item_line(item: ItemStats) -> list:
    return [
        item.notebook,
        item.exercise,
        item.cell,
        f"{item.points:g}",
        item.submitted,
        item.full_marks,
        decimal(item.share_earned),
        decimal(item.discrimination.value),
        item.remark,
        "autograder",
        "",
        "",
    ]


def written_line(item: WrittenStats) -> list:
    return [
        item.notebook,
        item.answer_cell,
        "",
        f"{item.points:g}",
        item.submitted,
        item.full_marks,
        decimal(item.share_earned),
        "",
        "",
        "TA",
        item.waiting,
        item.state,
    ]


def student_lines(report: ClassReport) -> tuple[list[str], list[list]]:
    header = [
        "student_id",
        "status",
        "owner",
        "cause",
        "score",
        "max_score",
        "written_score",
        "written_max",
        "waiting_for_ta",
        "minutes_late",
        "late_penalty",
        "past_cutoff",
        "extended_until",
        "score_after_penalty",
        "misconceptions",
        "unsubmitted",
        "message",
        "notes",
        "feedback",
    ]
    lines = [
        [
            r.student_id,
            r.status.label,
            r.status.owner,
            r.cause.name.lower() if r.cause else "",
            f"{r.score:g}",
            f"{report.max_points:g}",
            f"{r.grades.written_score:g}" if r.grades else "",
            f"{r.grades.written_max:g}" if r.grades else "",
            len(r.grades.waiting) if r.grades else 0,
            round(r.grades.seconds_late / 60) if r.grades else 0,
            f"{r.grades.late_penalty:g}" if r.grades else "",
            ("yes" if r.grades.past_cutoff else "no") if r.grades else "",
            _extended_until(report, r.student_id),
            f"{r.grades.after_penalty:g}" if r.grades else "",
            " ".join(r.grades.diagnosed) if r.grades else "",
            " ".join(r.grades.unsubmitted) if r.grades else "",
            r.message,
            " | ".join(note.text for note in r.notes),
            report.feedback.first(r.student_id),
        ]
        for r in report.rows
    ]
    return header, lines


def _extended_until(report: ClassReport, student: str) -> str:
    extension = report.extension_of(student)
    return extension.until.isoformat() if extension else ""


def misconception_lines(report: ClassReport) -> tuple[list[str], list[list]]:
    return ["id", "title", "count", "students"], [
        [m.id, m.title, m.count, " ".join(m.students)] for m in report.misconceptions
    ]


def note_lines(report: ClassReport) -> tuple[list[str], list[list]]:
    return ["kind", "submissions", "students"], [
        [g.kind.phrase, len(g.students), " ".join(g.students)] for g in report.notes
    ]
