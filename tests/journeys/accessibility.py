"""axe-core's serious and critical violations on a page (or part of one) the kit renders.

axe-core comes from tests/accessibility/ (pinned by its package-lock.json; `make test` installs it
with `npm ci`). A test that calls this fails when it is missing: a page that was not checked is
not a pass.

Scope: only markup the kit owns is ours to fix. Where a page embeds markup the kit does not write
(JupyterLab's own UI around the Pre-check panel, nbgrader's formgrader frame around the kit's
templates), the caller passes `context`, a CSS selector of the kit's node; no rule is ever disabled.
"""

from __future__ import annotations

import pytest

from gradekit.core.course import REPO_ROOT

AXE = REPO_ROOT / "tests" / "accessibility" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING_IMPACTS = ("serious", "critical")

# The page's own Content-Security-Policy may refuse an inline script, so axe's source is
# evaluated by the driver, which no page policy governs.
_RUN_AXE = """async (context) => {
    const results = await axe.run(context === null ? document : context, {resultTypes: ['violations']});
    return results.violations.map(rule => ({
        id: rule.id, impact: rule.impact, help: rule.help,
        targets: rule.nodes.map(node => node.target.join(' ')),
    }));
}"""


def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(
            f"axe-core is missing at {AXE.relative_to(REPO_ROOT)}: run `make tests/accessibility/node_modules/.stamp`"
        )
    return AXE.read_text(encoding="utf-8")


def blocking_violations(page_or_frame, context: str | None = None) -> list[str]:
    """One line per serious or critical violation: the rule, its impact, what it asks and the elements.

    `page_or_frame` is a Playwright page or frame; `context` limits the check to the nodes of
    that selector (which must exist), for pages whose surroundings the kit does not write.
    """
    if context is not None:
        assert page_or_frame.locator(context).count() > 0, f"nothing to check: no element matches {context}"
    page_or_frame.evaluate(axe_source())
    violations = page_or_frame.evaluate(_RUN_AXE, context)
    return [
        f"{rule['id']} ({rule['impact']}: {rule['help']}) on {', '.join(rule['targets'])}"
        for rule in violations
        if rule["impact"] in BLOCKING_IMPACTS
    ]


def frame_of(frame_locator):
    """The Frame behind a FrameLocator (axe runs in a frame, not through a locator)."""
    return frame_locator.owner.element_handle().content_frame()
