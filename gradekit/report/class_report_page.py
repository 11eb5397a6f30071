"""The class report page, section by section, in the order a TA reads it.

1. the headline figures, then, after a regrade, whose score it changed; 2. the students to reach
out to; 3. the score histogram; 4. share of points earned and discrimination per exercise and test
cell; 5. the commonest misconceptions; 6. what was set aside or repaired, grouped by kind.
"""

from __future__ import annotations

from gradekit.core.html_page import Html, bullets, element, folded, join, link, page, png_image, table
from gradekit.core.status import Status
from gradekit.report.class_figures import ClassReport, decimal, reasons_to_reach_out
from gradekit.report.item_statistics import LOW_DISCRIMINATION, MIN_SUBMITTERS, WEAK_SHARE, ItemStats, WrittenStats
from gradekit.report.score_histogram import histogram_png

TOP_MISCONCEPTIONS = 5
REACH_OUT_SHOWN = 12


def report_page(report: ClassReport) -> str:
    sections = (
        headline(report),
        regrade_section(report),
        reach_out_section(report),
        score_section(report),
        items_section(report),
        misconceptions_section(report),
        term_section(report),
        notes_section(report),
        students_section(report),
    )
    return page("Class report", join(sections))


def student_link(report: ClassReport, student: str) -> Html:
    return link(student, report.feedback.first(student))


def students_linked(report: ClassReport, students) -> Html:
    return join(join([", " if i else "", student_link(report, s)]) for i, s in enumerate(students))


def points(value: float) -> str:
    return f"{value:g}"


def headline(report: ClassReport) -> Html:
    median = report.median_score
    figures = [
        ("submissions", len(report.rows), ""),
        *((status.headline, len(report.with_status(status)), "warn" if status.needs_ta else "") for status in Status),
        (
            f"with written answers waiting for a TA ({points(report.waiting_points)} points)",
            len(report.waiting_for_ta),
            "warn",
        ),
        (f"median autograded score of {points(report.max_points)}", "–" if median is None else points(median), ""),
    ]
    boxes = join(
        element("div", join([element("b", value), label]), class_="figure" + (f" {style}" if style and value else ""))
        for label, value, style in figures
    )
    nav = ""
    if report.similarity_page:
        nav = element("nav", link("Submissions that look alike", report.similarity_page))
    return join([element("h1", "Class report"), nav, element("div", boxes, class_="headline", id="headline")])


def regrade_section(report: ClassReport) -> Html:
    """After a regrade: every student whose score changed, with the cells and the new diagnosis (regrade.csv)."""
    regrade = report.regrade
    if regrade is None or regrade.first_grading:
        return join([])
    said = element("p", regrade.headline)
    rows: list[list[object]] = [
        [
            student_link(report, change.student_id),
            points(change.before),
            points(change.after),
            bullets(cell.text for cell in change.cells),
            change.diagnosis,
            change.written_line,
        ]
        for change in regrade.changed
    ]
    header = ["student", "before", "after", "cells changed", "diagnosis now", "written answers"]
    listing = table(header, rows, numeric={1, 2}) if rows else ""
    return join([element("h2", "What the regrade changed"), element("div", join([said, listing]), id="regrade")])


def score_section(report: ClassReport) -> Html:
    scores = report.score_percentages
    if not scores:
        return join([element("h2", "Scores"), element("p", "No submission was graded.")])
    caption = element(
        "p", "Graded submissions only: flagged ones wait for a TA, failed ones have no score.", class_="muted"
    )
    image = png_image(histogram_png(scores), "histogram of the graded scores")
    return join([element("h2", "Scores"), element("div", image, id="histogram"), caption])


def items_section(report: ClassReport) -> Html:
    flagged = sorted((i for i in report.cells if i.needs_a_look), key=lambda item: item.attention_order)
    intro = element(
        "p",
        (
            "Among the students who submitted each notebook (graded ones only); what needs a look comes first, "
            "highlighted. Share of points earned: the mean share of an item's points its submitters earned "
            f"(1.000: everyone passed; below {WEAK_SHARE}: weak). Discrimination: correlation of the item's score "
            f"with the rest of the student's total, from at least {MIN_SUBMITTERS} submitters; below "
            f"{LOW_DISCRIMINATION} the item does not follow the rest of the assignment. Written answers come last, "
            "with how far their grading is; one waiting for a TA is highlighted, and its share counts only the "
            "answers with a score."
        ),
        class_="muted",
    )
    computed = any(i.discrimination.value is not None for i in report.cells)
    summary = element(
        "p",
        "No test cell is weak or has low or negative discrimination."
        if computed
        else f"No test cell is weak. Discrimination is not computed: it takes {MIN_SUBMITTERS} submitters of a notebook.",
    )
    if flagged:
        summary = join(
            [
                element("p", f"{len(flagged)} test cell(s) to look at:"),
                bullets(
                    join(
                        [
                            element("b", f"{i.notebook} / {i.cell}"),
                            f": {i.row_remark}"
                            + (
                                f" (r = {decimal(i.discrimination.value)})"
                                if i.discrimination.value is not None
                                else ""
                            ),
                        ]
                    )
                    for i in flagged
                ),
            ]
        )
    return join([element("h2", "Exercises and test cells"), intro, summary, too_few_line(report), item_table(report)])


def too_few_line(report: ClassReport) -> Html:
    """Once for the table: the notebooks whose rows have no discrimination for want of submitters."""
    few = {i.notebook: i.submitted for i in report.cells if i.discrimination.too_few}
    if not few or all(i.discrimination.value is None for i in report.cells):  # the summary has said it then
        return join([])
    named = ", ".join(f"{notebook} ({count} submitters)" for notebook, count in few.items())
    return element("p", f"Discrimination not computed, too few submitters: {named}.", class_="muted")


def item_table(report: ClassReport) -> Html:
    """Exercises that need a look first (weakest, then least discriminating), highlighted; each with its cells."""
    rows, styles = [], []
    for exercise in sorted(report.exercises, key=lambda item: item.attention_order):
        cells = [c for c in report.cells if (c.notebook, c.exercise) == (exercise.notebook, exercise.exercise)]
        name = f"{exercise.notebook} / {exercise.exercise}"
        if len(cells) == 1:  # the exercise's figures are its one cell's: one row says it all
            name += f" ({cells[0].cell})"
        rows.append(item_row(exercise, name))
        styles.append("group flagged" if exercise.needs_a_look else "group")
        for cell in cells if len(cells) > 1 else ():
            rows.append(item_row(cell, f"\u2003{cell.cell}"))
            styles.append("flagged" if cell.needs_a_look else "")
    for written in report.written:
        rows.append(written_row(written))
        styles.append("group flagged" if written.needs_a_look else "group")
    header = [
        "exercise / test cell",
        "points",
        "submitted",
        "full marks",
        "share of points earned",
        "discrimination",
        "remark",
    ]
    return table(header, rows, numeric={1, 2, 3, 4, 5}, row_classes=styles)


def written_row(item: WrittenStats) -> list:
    """A written answer, after the autograded exercises: its points and how far a TA has graded it."""
    return [
        f"{item.notebook} / {item.answer_cell} (written, graded by a TA)",
        points(item.points),
        item.submitted,
        item.full_marks,
        decimal(item.share_earned) or "–",
        "–",
        element("span", item.state, class_="note"),
    ]


def item_row(item: ItemStats, name: str) -> list:
    return [
        name,
        points(item.points),
        item.submitted,
        item.full_marks,
        decimal(item.share_earned) or "–",
        decimal(item.discrimination.value) or "–",
        element("span", item.row_remark, class_="note"),
    ]


def misconceptions_section(report: ClassReport) -> Html:
    title = element("h2", "Misconceptions")
    if not report.misconceptions:
        return join([title, element("p", "No misconception was diagnosed.")])
    top, rest = report.misconceptions[:TOP_MISCONCEPTIONS], report.misconceptions[TOP_MISCONCEPTIONS:]
    most = max(m.count for m in top)
    items = [
        join(
            [
                element("span", "", class_="bar", style=f"width:{m.count / most * 8:.2f}em"),
                " ",
                element("b", m.title),
                f" ({m.id}): {m.count} student(s): ",
                students_linked(report, m.students),
                element("div", m.diagnosis, class_="muted note"),
            ]
        )
        for m in top
    ]
    listing = element("ol", join(element("li", item) for item in items), id="top-misconceptions")
    if not rest:
        return join([title, listing])
    others = table(
        ["misconception", "students", "who"],
        [[f"{m.title} ({m.id})", m.count, students_linked(report, m.students)] for m in rest],
        numeric={1},
    )
    return join([title, listing, folded(f"{len(rest)} more misconception(s), each shown by fewer students", others)])


def reach_out_section(report: ClassReport) -> Html:
    title = element("h2", "Students to reach out to")
    found = reasons_to_reach_out(report)
    if not found:
        return join([title, element("p", "Nobody: every submission was graded and complete.")])
    rows: list[list[object]] = [
        [student_link(report, row.student_id), row.status.label, points(row.score), "; ".join(reasons)]
        for row, reasons in found
    ]
    header = ["student", "status", "score", "why"]
    shown = table(header, rows[:REACH_OUT_SHOWN], numeric={2})
    if len(rows) <= REACH_OUT_SHOWN:
        return join([title, shown])
    return join(
        [
            title,
            shown,
            folded(f"{len(rows) - REACH_OUT_SHOWN} more", table(header, rows[REACH_OUT_SHOWN:], numeric={2})),
        ]
    )


def term_section(report: ClassReport) -> Html:
    """The due date, the late policy and every extension granted, with who has it and why."""
    term = report.term
    title = element("h2", "Due date and extensions")
    due = f"Due {term.due.isoformat()}" if term.due else "No due date is set (c.CourseKit.due_dates): nothing is late"
    said = element("p", f"{due}. Late policy: {term.late_policy or 'no late penalty'}.")
    if not term.extensions:
        return join([title, said, element("p", "No extensions granted.")])
    rows: list[list[object]] = [
        [student_link(report, e.student_id), e.until.isoformat(), e.why, e.granted_at.isoformat(timespec="minutes")]
        for e in term.extensions
    ]
    listing = table(["student", "extended until", "why", "granted"], rows)
    return join([title, said, element("div", listing, id="extensions")])


def notes_section(report: ClassReport) -> Html:
    title = element("h2", "What was set aside or repaired before grading")
    if not report.notes:
        return join([title, element("p", "Nothing: every submission was graded as handed in.")])
    groups = [
        folded(group.summary, bullets(join([student_link(report, s), ": ", note.text]) for s, note in group.notes))
        for group in report.notes
    ]
    return join([title, element("div", join(groups), id="notes")])


def students_section(report: ClassReport) -> Html:
    rows: list[list[object]] = [
        [
            student_link(report, r.student_id),
            r.status.label,
            points(r.score),
            r.grades.late_summary if r.grades else "",
            ", ".join(r.grades.diagnosed) if r.grades else "",
            join(
                join([" " if i else "", link(notebook.split("_")[0], href)])
                for i, (notebook, href) in enumerate(report.feedback.pages(r.student_id))
            ),
        ]
        for r in report.rows
    ]
    body = table(["student", "status", "score", "late penalty", "misconceptions", "feedback"], rows, numeric={2})
    return join([element("h2", "All students"), folded(f"{len(rows)} students (also in students.csv)", body)])
