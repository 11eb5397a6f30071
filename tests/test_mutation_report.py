"""The mutation report: the terminal table and the HTML page with each survivor."""

import pytest

from gradekit.mutation.equivalents import NotebookScore
from gradekit.mutation.mutants import Mutant
from gradekit.mutation.report import score_table, write_html
from gradekit.mutation.runner import MutantResult

pytestmark = pytest.mark.unit

SURVIVOR = Mutant(
    "010-f-x",
    "010_history",
    "f",
    "number",
    "",
    "--- reference\n+++ mutant\n@@ -1 +1 @@\n-    return 1\n+    return <2>\n",
)
SCORE = NotebookScore("010_history", 20, 18, 1, 0, 1)


def test_the_table_totals_the_notebooks():
    lines = score_table((SCORE,)).splitlines()
    assert lines[-1].split() == ["all", "20", "18", "1", "0", "1", "94.7%"]


def test_the_page_escapes_the_diff_and_marks_a_notebook_under_the_bar(tmp_path):
    page = write_html(tmp_path / "mutants.html", (SCORE,), (MutantResult(SURVIVOR, ()),), {}).read_text()
    assert "return &lt;2&gt;" in page and "unreviewed" in page
    assert page.count('class="flagged"') == 2  # the notebook's row and the total
