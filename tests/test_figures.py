"""The figures files the docs include: written by the commands, in the format the docs expect."""

import re
from pathlib import Path

import pytest

from gradekit.commands.benchmark_phases import PhaseTable
from gradekit.commands.figures import blind_figure, digits_figure, markdown_table, phases_figure, write_figure
from gradekit.grading.phase_clock import Phase, PhaseTimes
from gradekit.mutation.blind import BlindAnswer, BlindResult, BlindSet, Judgement

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "pages" / "figures"
# The command and its figures option: --figures, or a named one such as check's --visible-figures;
# the suite's own timings are written by pytest (tests/durations_figures.py).
HEADER = re.compile(r"^<!-- written by: python -m (gradekit [\w-]+|pytest) .*--(?:[\w-]+-)?figures (\S+) -->$")


def test_a_figure_names_the_command_that_wrote_it_then_holds_its_table(tmp_path):
    path = tmp_path / "digits.md"
    write_figure(path, "digits", digits_figure(0.405, 0.878, 2.5))
    first, blank, *table = path.read_text().splitlines()
    assert HEADER.match(first) and first.endswith(f"--figures {path.as_posix()} -->")
    assert blank == ""
    assert table[0].startswith("| test accuracy |") and "| 0.878 | 0.405 | 2.5 s |" in table[2]


def test_the_phase_figure_holds_each_phase_the_engine_s_total_and_the_ratio_to_the_floor():
    times = PhaseTimes({Phase.TEST_CELLS: 5.0, Phase.FEEDBACK: 3.0})
    figure = phases_figure(PhaseTable(times, notebooks=4, floor_per_notebook=1.0))
    assert f"| {Phase.TEST_CELLS.value} | 5.0 s | 1.250 s | 62.5% |" in figure
    assert "| **engine, all phases** | 8.0 s | 2.000 s | 100% |" in figure
    assert "**2.00x** the floor" in figure


def test_a_markdown_table_has_a_header_a_rule_and_one_line_a_row():
    assert markdown_table(["a", "b"], [[1, 2], [3, 4]]).splitlines() == [
        "| a | b |",
        "| --- | --- |",
        "| 1 | 2 |",
        "| 3 | 4 |",
    ]


@pytest.mark.parametrize("figure", sorted(FIGURES.glob("*.md")), ids=lambda path: path.name)
def test_every_figure_in_the_docs_was_written_by_a_command_into_its_own_place(figure):
    match = HEADER.match(figure.read_text().splitlines()[0])
    assert match, f"{figure.name}: its first line must name the command that wrote it"
    assert match.group(2) == f"docs/pages/figures/{figure.name}"


def test_the_blind_figure_leads_with_its_counts_then_lists_each_answer_that_needs_work():
    answer = BlindAnswer("010_history", "leaf-in-float32", "float64_leaf", False, "pass", "built in float32")
    missed = BlindResult(answer, 0.0, 2.0, (), "float64_leaf([1.1]) holds 1.100000023841858 | not 1.1")
    blind = BlindSet((missed,), {"leaf-in-float32": Judgement("numpy-default-dtype", "float32 by default")}, 3.0)
    text = blind_figure(blind)
    assert text.splitlines()[2].startswith("| 1 | 0 | 1 | 0 | 0 | 1 | 0 | 0 | 1 | 1 |")
    unnamed = text.split("## Wrong answers caught with no misconception named")[1].split("##")[0]
    assert (
        "| 010_history | test_float64_leaf | `leaf-in-float32` | `numpy-default-dtype` | float32 by default |"
        in unnamed
    )
    assert "1.100000023841858 \\| not 1.1" in unnamed  # a bar in a message cannot split the table's row
