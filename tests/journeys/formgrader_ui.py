"""What a TA does in formgrader's pages, as Playwright steps: open a cohort, open a written answer, score it."""

from __future__ import annotations

from journeys.lab_ui import KERNEL_TIMEOUT_MS


def open_cohort(formgrader, assignment_id: str, student: str) -> None:
    """Manage Assignments > the assignment's # Submissions link; waits for `student`'s row."""
    formgrader.get_by_role("link", name="Manage Assignments").click()
    formgrader.locator("tr", has_text=assignment_id).locator("td").nth(8).get_by_role("link").click()
    # The list comes after formgrader has scored every submission from the gradebook: on a loaded
    # machine that outlasts a click's wait, so it gets a kernel's.
    formgrader.locator("#main-table tr", has_text=student).wait_for(timeout=KERNEL_TIMEOUT_MS)


def type_and_save(page, field, text: str, api: str):
    """Put `text` into a formgrader field and leave it; returns the server's answer to the save it triggers.

    The text goes in whole (Playwright's fill): typed key by key, a first key could land on a loaded
    machine before formgrader's page had finished focusing the field, and be lost.
    """
    field.fill(text)
    with page.expect_response(lambda r: f"/formgrader/api/{api}/" in r.url and r.request.method == "PUT") as saved:
        page.keyboard.press("Tab")
    return saved.value


def open_the_waiting_submission(formgrader, assignment_id: str, notebook: str, submissions: int) -> None:
    """Manual Grading > the assignment > the notebook (of `submissions` rows) > the one submission waiting for a TA.

    Each link is found by where it leads, not by its text: Manage Assignments also shows the
    assignment's name as a link (to its source folder), and a locator by name could resolve on that
    page while Manual Grading is still loading, so a loaded machine opened the folder instead.
    """
    formgrader.get_by_role("link", name="Manual Grading").click()
    gradebook = f"/formgrader/gradebook/{assignment_id}"
    formgrader.locator(f'a[href$="{gradebook}"]').click(timeout=KERNEL_TIMEOUT_MS)
    formgrader.locator(f'a[href$="{gradebook}/{notebook}"]').click(timeout=KERNEL_TIMEOUT_MS)
    # The table comes once formgrader has scored every submission of the notebook: a kernel's wait, as the cohort's.
    formgrader.locator("#main-table tr", has_text=f"Submission #{submissions}").wait_for(timeout=KERNEL_TIMEOUT_MS)
    waiting = formgrader.locator("#main-table tr", has=formgrader.locator(".needs-manual-grade .glyphicon-ok"))
    assert waiting.count() == 1, f"{waiting.count()} submissions wait for a TA, not one"
    waiting.get_by_role("link").first.click()
    formgrader.locator("#notebook").first.wait_for(timeout=KERNEL_TIMEOUT_MS)  # the grading page is rendered on request


def score_written_answers(page, formgrader, scores: dict[str, float]) -> None:
    """Type each cell's score into its box; each save must succeed and clear the cell's waiting mark."""
    for cell, score in scores.items():
        field = formgrader.locator(f"input.score.needs_manual_grade#{cell}")
        field.scroll_into_view_if_needed()
        assert type_and_save(page, field, f"{score:g}", "grade").ok
        formgrader.locator(f"input.score#{cell}:not(.needs_manual_grade)").wait_for()
