"""The benchmark's phase table: totals over the cohort, means per notebook, shares, and the ratio to the floor."""

import pytest

from gradekit.commands.benchmark_phases import PhaseTable, phase_lines
from gradekit.grading.phase_clock import Phase, PhaseTimes

pytestmark = pytest.mark.unit

# Two submissions of two notebooks each, and the feedback of both: 10 s of engine over 4 notebooks.
SUBMISSIONS = (
    PhaseTimes({Phase.KERNEL_START: 1.0, Phase.TEST_CELLS: 2.0, Phase.OTHER: 0.5}),
    PhaseTimes({Phase.KERNEL_START: 1.0, Phase.TEST_CELLS: 3.0, Phase.OTHER: 0.5}),
    PhaseTimes({Phase.FEEDBACK: 2.0}),
)
FLOORS = {"010_history": 0.5, "020_dtypes": 1.5}


@pytest.fixture
def table() -> PhaseTable:
    return PhaseTable.of(SUBMISSIONS, notebooks=4, floors=FLOORS)


def test_the_table_adds_each_phase_over_the_cohort_and_shares_the_engine_s_time(table):
    assert table.rows() == [
        (Phase.KERNEL_START, 2.0, 0.5, 0.2),
        (Phase.TEST_CELLS, 5.0, 1.25, 0.5),
        (Phase.FEEDBACK, 2.0, 0.5, 0.2),
        (Phase.OTHER, 1.0, 0.25, 0.1),
    ]
    assert sum(share for *_, share in table.rows()) == pytest.approx(1.0)


def test_the_engine_per_notebook_is_set_against_the_mean_floor(table):
    assert (table.engine_seconds, table.per_notebook, table.floor_per_notebook) == (10.0, 2.5, 1.0)
    assert table.floor_ratio == 2.5


def test_the_printed_table_has_a_line_a_phase_the_engine_s_total_and_the_ratio(table):
    lines = phase_lines(table)
    assert "4 notebooks" in lines[0]
    (kernel,) = [line for line in lines if line.strip().startswith(Phase.KERNEL_START.value)]
    assert kernel.split()[-3:] == ["2.0s", "0.500s", "20.0%"]
    assert lines[-2].split()[-3:] == ["10.0s", "2.500s", "100.0%"]
    assert "2.50x the floor" in lines[-1] and "within 3x" in lines[-1]


def test_no_floor_measured_makes_no_ratio():
    assert PhaseTable.of(SUBMISSIONS, notebooks=4, floors={}).floor_ratio == float("inf")
