import csv
import re
from html.parser import HTMLParser

import pytest
from class_report_fixtures import CATALOG, LEFT_OUT_Y, MANIFEST, REORDERED, ROWS, X, Y

from gradekit.report.class_figures import late_by, lowest_shown, misconception_stats
from gradekit.report.class_report import write_class_report

pytestmark = pytest.mark.unit


class Tables(HTMLParser):
    """The text of every table cell of a page, table by table, row by row."""

    def __init__(self, page: str):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.in_cell = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.tables[-1][-1].append("")
            self.in_cell = True

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.in_cell = False

    def handle_data(self, data):
        if self.in_cell:
            self.tables[-1][-1][-1] += data


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def report(tmp_path):
    """The fixture cohort's report in <course>/class-report, with feedback pages for ann."""
    feedback = tmp_path / "feedback" / "ann" / "a"
    feedback.mkdir(parents=True)
    (feedback / f"{X}.html").write_text("feedback")
    # Four students: discrimination from as few as two, so that the page shows what a class's would.
    page = write_class_report(tmp_path / "class-report", MANIFEST, ROWS, CATALOG, tmp_path / "feedback", "a", minimum=2)
    return page, page.read_text()


def test_a_small_cohort_gets_no_discrimination_and_no_reassurance(tmp_path):
    page = write_class_report(tmp_path / "class-report", MANIFEST, ROWS, CATALOG).read_text()
    intro = page.split("<h2>Exercises and test cells</h2>")[1].split("<table>")[0]
    assert "Discrimination is not computed: it takes 10 submitters" in intro
    assert "has low or negative discrimination" not in intro
    cells = {line["cell"]: line for line in read_csv(tmp_path / "class-report" / "cells.csv")}
    assert cells["test_g2"]["discrimination"] == "" and "too few submitters" in cells["test_g2"]["remark"]


def test_too_few_submitters_is_said_once_above_the_table_not_on_its_rows(tmp_path):
    # Four submitters of 010_x (computed from four), three of 020_y (too few).
    page = write_class_report(tmp_path / "class-report", MANIFEST, ROWS, CATALOG, minimum=4).read_text()
    intro, table = page.split("<h2>Exercises and test cells</h2>")[1].split("<table>", 1)
    assert "Discrimination not computed, too few submitters: 020_y (3 submitters)." in intro
    assert "too few submitters" not in table.split("</table>")[0]
    assert page.count("too few submitters") == 1
    cells = {line["cell"]: line for line in read_csv(tmp_path / "class-report" / "cells.csv")}
    assert "too few submitters (3; it takes 4)" in cells["test_h"]["remark"]  # the CSV keeps it per row


def test_misconceptions_are_counted_per_student_most_frequent_first():
    assert [(s.id, s.students) for s in misconception_stats(ROWS, CATALOG)] == [
        ("first-wrong-idea", ("bob", "cai")),
        ("second-wrong-idea", ("cai",)),
    ]


def test_the_headline_counts_statuses_and_gives_the_median_of_the_graded(report):
    _, page = report
    headline = page.split('id="headline"')[1].split("</div></div>")[0]
    # graded totals 10, 8, 1, 3: median (3 + 8) / 2 = 5.5 of 11 points
    texts = re.findall(r"<b>([^<]*)</b>([^<]*)", headline)
    assert texts == [
        ("6", "submissions"),
        ("4", "graded"),
        ("1", "flagged for a TA"),
        ("1", "could not be graded"),
        ("0", "not scored: grader error"),
        ("1", "with written answers waiting for a TA (2 points)"),
        ("5.5", "median autograded score of 11"),
    ]


def test_the_sections_come_in_the_order_a_ta_reads_them(report):
    _, page = report
    titles = re.findall(r"<h2>([^<]*)</h2>", page)
    assert titles == [
        "Students to reach out to",
        "Scores",
        "Exercises and test cells",
        "Misconceptions",
        "Due date and extensions",
        "What was set aside or repaired before grading",
        "All students",
    ]


def test_the_page_is_self_contained(report):
    path, page = report
    assert "<link" not in page and "<script" not in page and "http:" not in page and "https:" not in page
    images = re.findall(r'<img [^>]*src="([^"]*)"', page)
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,")
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "cells.csv",
        "exercises.csv",
        "misconceptions.csv",
        "notes.csv",
        "report.html",
        "students.csv",
    ]


def test_the_csv_files_hold_the_figures_of_the_page(report):
    path, page = report
    table = next(t for t in Tables(page).tables if t[0][0] == "exercise / test cell")
    # a row names an exercise, "010_x / answer_f (test_f)" when its one test cell shares its figures, or a cell
    shown = {}
    for row in table[1:]:
        for name in re.findall(r"\w+", row[0].split(" / ")[-1]):
            shown[name] = row[1:6]
    for name in ("exercises.csv", "cells.csv"):
        for line in read_csv(path.parent / name):
            figures = [line[k] or "–" for k in ("points", "submitted", "full_marks", "share_earned", "discrimination")]
            assert shown[line["cell"] or line["exercise"]] == figures, line
    cells = {line["cell"]: line for line in read_csv(path.parent / "cells.csv")}
    assert cells["test_h"]["share_earned"] == "0.667" and cells["test_h"]["submitted"] == "3"
    assert cells["test_g2"]["discrimination"] == "-0.970" and cells["test_g2"]["remark"].startswith("negative")


def test_written_answers_close_the_exercise_table_with_how_far_their_grading_is(report):
    path, page = report
    table = next(t for t in Tables(page).tables if t[0][0] == "exercise / test cell")
    assert table[-1] == [
        f"{Y} / answer_essay (written, graded by a TA)",
        "2",
        "3",  # dan did not submit 020_y
        "0",
        "0.375",  # bob's 1.5 of 2 and cai's blank 0; ann's waits
        "–",
        "1 waiting for a TA; 1 graded; 1 left blank (0 points)",
    ]
    assert '<tr class="group flagged"><td>' + f"{Y} / answer_essay" in page
    line = next(l for l in read_csv(path.parent / "exercises.csv") if l["exercise"] == "answer_essay")
    assert (line["graded_by"], line["waiting_for_ta"], line["state"], line["share_earned"]) == (
        "TA",
        "1",
        "1 waiting for a TA; 1 graded; 1 left blank (0 points)",
        "0.375",
    )
    assert {l["graded_by"] for l in read_csv(path.parent / "cells.csv")} == {"autograder"}


def test_flagged_test_cells_are_named_above_the_table(report):
    _, page = report
    intro = page.split("<h2>Exercises and test cells</h2>")[1].split("<table>")[0]
    assert "2 test cell(s) to look at" in intro
    assert f"{X} / test_f" in intro and f"{X} / test_g2" in intro and "test_h" not in intro


def test_notes_are_grouped_by_kind_with_the_students_folded(report):
    path, page = report
    notes = page.split('id="notes"')[1].split("<h2>")[0]
    summaries = re.findall(r"<summary>([^<]*)</summary>", notes)
    assert summaries == [
        "2 submissions left out notebooks (they score 0): 1 each",
        "1 submission reordered cells (graded in the submitted order)",
    ]
    assert notes.count(LEFT_OUT_Y.text) == 2 and notes.count(REORDERED.text) == 1
    assert read_csv(path.parent / "notes.csv")[0] == {
        "kind": "left out notebooks (they score 0)",
        "submissions": "2",
        "students": "dan eve",
    }


def test_students_to_reach_out_to_come_failed_then_flagged_then_lowest(report):
    _, page = report
    table = next(t for t in Tables(page).tables if t[0] == ["student", "status", "score", "why"])
    assert [row[0] for row in table[1:]] == ["eve", "fay", "cai", "dan"]
    assert table[1][3] == "could not be graded: malformed notebook JSON"
    # In a class of four graded submissions, only the lowest score is a reason (a quarter of the class).
    assert table[3][3].startswith("the lowest score")
    assert table[4][3] == "handed in 1 h 35 min after the due date; left out 1 of 2 notebooks"


def test_lateness_reads_to_the_minute_and_the_lowest_scores_are_a_quarter_of_the_class_at_most():
    assert [late_by(s) for s in (5, 720, 95 * 60, 2 * 86400 + 3 * 3600 + 60)] == [
        "1 min",
        "12 min",
        "1 h 35 min",
        "2 days 3 h",
    ]
    assert [lowest_shown(n) for n in (1, 4, 8, 20, 200)] == [1, 1, 2, 5, 5]


def test_student_names_link_to_their_feedback_and_a_similarity_page_when_there_is_one(tmp_path, report):
    path, page = report
    assert f'<a href="../feedback/ann/a/{X}.html">ann</a>' in page
    assert "similarity.html" not in page
    (path.parent / "similarity.html").write_text("alike")
    page = write_class_report(path.parent, MANIFEST, ROWS, CATALOG, tmp_path / "feedback", "a").read_text()
    assert '<a href="similarity.html">' in page


def test_the_top_misconceptions_list_their_students(report):
    path, page = report
    top = page.split('id="top-misconceptions"')[1].split("</ol>")[0]
    assert top.index("first-wrong-idea") < top.index("second-wrong-idea")
    assert "bob, cai" in top and "check the first thing" in top
    assert read_csv(path.parent / "misconceptions.csv")[0] == {
        "id": "first-wrong-idea",
        "title": "first",
        "count": "2",
        "students": "bob cai",
    }
    students = read_csv(path.parent / "students.csv")
    assert [r["status"] for r in students] == ["graded"] * 4 + ["failed", "flagged"]
    assert [r["minutes_late"] for r in students] == ["0", "0", "0", "95", "0", "0"]
    # ann's written answer waits for a TA, bob's was marked 1.5 of 2: points apart from the autograded ones
    assert [(r["written_score"], r["written_max"], r["waiting_for_ta"]) for r in students[:2]] == [
        ("0", "2", "1"),
        ("1.5", "2", "0"),
    ]
