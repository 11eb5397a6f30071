import csv

import pytest

from gradekit.catalog import Misconception
from gradekit.report.class_report import cell_stats, misconception_stats, write_class_report
from gradekit.grading.cohort import CohortRow
from gradekit.grading.gradebook import CellGrade, SubmissionGrades
from gradekit.manifest import Exercise, Manifest, NotebookEntry, TestCell
from gradekit.grading.status import Status

pytestmark = pytest.mark.unit

NB = "010_x"
MANIFEST = Manifest(
    "a",
    (NotebookEntry(NB, "1", "X", "r", "c"),),
    (
        Exercise(NB, "answer_f", ("f",), (TestCell("test_f", 2, ("first-wrong-idea",)),)),
        Exercise(NB, "answer_g", ("g",), (TestCell("test_g", 3, ("second-wrong-idea",)),)),
    ),
)
CATALOG = {
    "first-wrong-idea": Misconception("first-wrong-idea", "first", "b1", "check the first thing"),
    "second-wrong-idea": Misconception("second-wrong-idea", "second", "b2", "check the second thing"),
}


def row(student, f, g, named=()):
    cells = (CellGrade(NB, "test_f", f, 2, named[:1]), CellGrade(NB, "test_g", g, 3, named[1:]))
    return CohortRow(student, Status.GRADED, "", SubmissionGrades(student, cells))


ROWS = (
    row("ann", 2, 3),
    row("bob", 0, 3, ("first-wrong-idea",)),
    row("cai", 0, 0, ("first-wrong-idea", "second-wrong-idea")),
    CohortRow("dee", Status.FAILED, "malformed notebook JSON", None),
)


def test_pass_rates_and_misconception_counts():
    rates = {c.cell: (c.graded, c.passed) for c in cell_stats(MANIFEST, ROWS)}
    assert rates == {"test_f": (3, 1), "test_g": (3, 2)}
    stats = misconception_stats(ROWS, CATALOG)
    assert [(s.id, s.students) for s in stats] == [
        ("first-wrong-idea", ("bob", "cai")),
        ("second-wrong-idea", ("cai",)),
    ]


def test_report_files_show_the_top_problems(tmp_path):
    report = write_class_report(tmp_path, MANIFEST, ROWS, CATALOG)
    page = report.read_text()
    top = page.split("<h2>Top problems</h2>")[1].split("</ol>")[0]
    assert top.index("first-wrong-idea") < top.index("second-wrong-idea")
    assert "bob, cai" in top and "check the first thing" in top
    assert "dee: malformed notebook JSON" in page
    for image in ("score_distribution.png", "cell_pass_rate.png", "misconceptions.png"):
        assert (tmp_path / image).read_bytes().startswith(b"\x89PNG")
    with open(tmp_path / "misconceptions.csv", newline="") as handle:
        assert list(csv.DictReader(handle))[0] == {"id": "first-wrong-idea", "title": "first", "count": "2", "students": "bob cai"}
    with open(tmp_path / "students.csv", newline="") as handle:
        assert [r["status"] for r in csv.DictReader(handle)] == ["graded", "graded", "graded", "failed"]
