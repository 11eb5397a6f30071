"""What a person does in JupyterLab, as Playwright steps: menus, notebook cells, nbgrader's panels.

Locators follow what is on screen (menu labels, button names, cell prompts);
ids are used only where nbgrader's own pages give them (the assignment lists,
the formgrader tables and score inputs).
"""

from __future__ import annotations

import re
import time

from playwright.sync_api import TimeoutError as PlaywrightTimeout

# Generous for a loaded 2-core machine, short enough that a hung page fails the test.
KERNEL_TIMEOUT_MS = 90_000
STEP_TIMEOUT_MS = 30_000
EXECUTED_PROMPT = re.compile(r"\[(\d+)\]")


def wait_for_lab(page) -> None:
    """Wait until JupyterLab's main area and menu bar are on screen."""
    page.locator("#jp-main-dock-panel").wait_for(timeout=STEP_TIMEOUT_MS)
    page.get_by_role("menuitem", name="Nbgrader").wait_for(timeout=STEP_TIMEOUT_MS)


# A menu clicked while JupyterLab is still wiring its extensions up may stay shut or open without
# their items: it is opened again, this many times, before the step fails.
MENU_ATTEMPTS = 4
MENU_OPEN_MS = 8_000


def open_menu_item(page, menu: str, item: str) -> None:
    entry = page.get_by_role("menuitem", name=item, exact=True)
    for _ in range(MENU_ATTEMPTS - 1):
        page.get_by_role("menuitem", name=menu, exact=True).click()
        try:
            entry.wait_for(state="visible", timeout=MENU_OPEN_MS)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            continue
        entry.click()
        return
    page.get_by_role("menuitem", name=menu, exact=True).click()
    entry.click()  # the last attempt fails with Playwright's own account of what it waited for


def switch_to_tab(page, title: str) -> None:
    """Bring the main-area tab whose title is `title` to the front."""
    page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text=title).first.click()


# --- the notebook -------------------------------------------------------------------------


def notebook(page):
    """The notebook panel in front."""
    return page.locator(".jp-NotebookPanel:visible")


def cell(page, index: int):
    return notebook(page).locator(".jp-Notebook .jp-Cell").nth(index)


def wait_for_idle_kernel(page) -> None:
    page.locator(".jp-StatusBar-TextItem", has_text="| Idle").first.wait_for(timeout=KERNEL_TIMEOUT_MS)


def run_cell(page, index: int) -> str:
    """Select cell `index`, press Shift+Enter, wait for its new execution count; return its output text."""
    target = cell(page, index)
    prompt = target.locator(".jp-InputPrompt")
    before = prompt.inner_text()
    prompt.click()
    page.keyboard.press("Shift+Enter")
    deadline = time.monotonic() + KERNEL_TIMEOUT_MS / 1000
    while True:
        now = prompt.inner_text()
        if EXECUTED_PROMPT.search(now) and now != before:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"cell {index} did not finish running (prompt {now!r})")
        page.wait_for_timeout(200)
    return output_text(page, index)


def output_text(page, index: int) -> str:
    outputs = cell(page, index).locator(".jp-OutputArea")
    return outputs.inner_text() if outputs.count() else ""


def type_into_cell(page, index: int, source: str) -> None:
    """Replace the text of cell `index` as a person would: click into it, select all, type the new text."""
    editor = cell(page, index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)


def save_notebook(page) -> None:
    """Press Ctrl+S on the edited notebook and wait until its tab no longer shows unsaved changes.

    Waiting matters: nbgrader's Validate button saves too, and two saves in flight
    make JupyterLab ask whether the file changed on disk.
    """
    dirty = page.locator("#jp-main-dock-panel .lm-TabBar-tab.jp-mod-current.jp-mod-dirty")
    dirty.wait_for(state="attached", timeout=STEP_TIMEOUT_MS)
    cell(page, 0).locator(".jp-InputPrompt").click()  # command mode, so Ctrl+S reaches the notebook
    page.keyboard.press("Control+s")
    dirty.wait_for(state="detached", timeout=STEP_TIMEOUT_MS)


def rendered_markdown(page, index: int):
    return cell(page, index).locator(".jp-RenderedMarkdown")


def validate(page) -> str:
    """Press nbgrader's Validate button on the notebook toolbar; return the result dialog's text."""
    notebook(page).get_by_role("button", name="Validate").click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator(".jp-Dialog-header", has_text="Validat").wait_for(timeout=KERNEL_TIMEOUT_MS)
    return dialog.inner_text()


def dialog_text(page, title: str) -> str:
    """Wait for the dialog headed `title`; return the text of its body."""
    dialog = page.locator(".jp-Dialog", has=page.locator(".jp-Dialog-header", has_text=title))
    dialog.wait_for(timeout=STEP_TIMEOUT_MS)
    return dialog.locator(".jp-Dialog-body").inner_text().strip()


def close_dialog(page) -> None:
    page.locator(".jp-Dialog").get_by_role("button", name="Ok").click()
    page.locator(".jp-Dialog").wait_for(state="detached", timeout=STEP_TIMEOUT_MS)


# --- nbgrader's Assignments tab -----------------------------------------------------------


def open_assignments(page) -> None:
    open_menu_item(page, "Nbgrader", "Assignment List")
    page.locator("#released_assignments_list").wait_for(timeout=STEP_TIMEOUT_MS)


def fetch(page, assignment: str) -> None:
    page.locator("#released_assignments_list .list_item", has_text=assignment).get_by_role(
        "button", name="Fetch"
    ).click()
    # The exchange copies the assignment, then lists everything again: work that grows with the machine's load.
    page.locator("#fetched_assignments_list .list_item", has_text=assignment).first.wait_for(timeout=KERNEL_TIMEOUT_MS)


def open_fetched_notebook(page, assignment: str, notebook_name: str) -> None:
    """Expand the fetched assignment and click one of its notebooks; wait for its kernel."""
    fetched = page.locator("#fetched_assignments_list")
    link = fetched.get_by_role("link", name=notebook_name, exact=True)
    if not link.is_visible():
        fetched.locator("a.assignment-notebooks-link", has_text=assignment).click()
    link.click()
    notebook(page).wait_for(timeout=STEP_TIMEOUT_MS)
    wait_for_idle_kernel(page)


def submit(page, assignment: str) -> str:
    """Press Submit on the fetched assignment; return the text of the new row under Submitted assignments."""
    page.locator("#fetched_assignments_list .list_item", has_text=assignment).get_by_role(
        "button", name="Submit"
    ).first.click()
    row = page.locator("#submitted_assignments_list .list_item", has_text=assignment).first
    row.wait_for(timeout=KERNEL_TIMEOUT_MS)  # listing the submitted reads every notebook to hash it
    return row.inner_text()


# --- formgrader (an iframe in its JupyterLab tab) -----------------------------------------


def open_formgrader(page):
    """Open Nbgrader > Formgrader; return the frame holding formgrader's pages."""
    open_menu_item(page, "Nbgrader", "Formgrader")
    frame = page.frame_locator("iframe")
    frame.get_by_role("link", name="Manual Grading").wait_for(timeout=STEP_TIMEOUT_MS)
    return frame


def table_rows(frame):
    """Rows of formgrader's main table, as lists of cell texts (waits for the table to be filled).

    Every formgrader table starts with a row saying it is loading: that row does not count as filled.
    """
    frame.locator("#main-table tr:not(:has-text('Loading, please wait'))").first.wait_for(timeout=KERNEL_TIMEOUT_MS)
    rows = frame.locator("#main-table tr")
    return [[cell_text.strip() for cell_text in row.locator("td").all_inner_texts()] for row in rows.all()]
