"""What a person does on JupyterHub's own pages, as Playwright steps: log in, wait for their server, log out."""

from __future__ import annotations

from journeys import lab_ui

# Spawning a server on a loaded 2-core machine takes a while; the hub itself allows 120 s.
SPAWN_TIMEOUT_MS = 150_000


def log_in(page, hub, username: str, password: str, screenshot=None) -> None:
    """Type the account's name and password into the hub's login page; wait for their JupyterLab."""
    page.goto(hub.url("hub/login"))
    page.locator("#username_input").fill(username)
    page.locator("#password_input").fill(password)
    if screenshot is not None:
        screenshot(page, f"{username}-login")
    page.locator("#login_submit").click()
    page.wait_for_url(f"**/user/{username}/lab**", timeout=SPAWN_TIMEOUT_MS)
    page.locator("#jp-main-dock-panel").wait_for(timeout=SPAWN_TIMEOUT_MS)
    page.get_by_role("menuitem", name="Nbgrader").wait_for(timeout=lab_ui.STEP_TIMEOUT_MS)


def log_out(page, hub) -> None:
    page.goto(hub.url("hub/logout"))
    page.locator("#username_input").wait_for(timeout=lab_ui.STEP_TIMEOUT_MS)


def nbgrader_menu(page) -> list[str]:
    """The labels under JupyterLab's Nbgrader menu, read by opening it (closed again afterwards)."""
    page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
    labels = page.locator(".lm-Menu .lm-Menu-itemLabel")
    labels.first.wait_for(timeout=lab_ui.STEP_TIMEOUT_MS)
    texts = [text.strip() for text in labels.all_inner_texts() if text.strip()]
    page.keyboard.press("Escape")
    return texts


def fetch_feedback(page, assignment: str) -> None:
    """Press Fetch Feedback on the submitted assignment; wait until the list offers to view it."""
    page.get_by_role("button", name="Fetch Feedback").first.click(timeout=lab_ui.KERNEL_TIMEOUT_MS)
    # Fetching and listing feedback hash every submitted notebook: work that grows with the machine's load.
    page.get_by_text("(view feedback)").first.wait_for(timeout=lab_ui.KERNEL_TIMEOUT_MS)
