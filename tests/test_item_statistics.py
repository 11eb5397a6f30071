import math

import pytest
from class_report_fixtures import MANIFEST, ROWS, X, Y

from gradekit.report.item_statistics import MIN_SUBMITTERS, cell_stats, exercise_stats, point_biserial

pytestmark = pytest.mark.unit


def by_name(items):
    return {(i.notebook, i.cell or i.exercise): i for i in items}


def test_point_biserial_of_a_pass_fail_item_by_hand():
    # item 1 1 0 0 (mean 1/2), rest 7 5 1 3 (mean 4): deviations .5 .5 -.5 -.5 and 3 1 -3 -1;
    # covariance sum 1.5 + .5 + 1.5 + .5 = 4; spreads 4 * .25 = 1 and 9 + 1 + 9 + 1 = 20; r = 4 / sqrt(20)
    assert point_biserial([1, 1, 0, 0], [7, 5, 1, 3], minimum=2).value == pytest.approx(4 / math.sqrt(20), abs=1e-9)


def test_a_correlation_that_cannot_be_computed_says_why():
    assert point_biserial([1, 1, 1], [3, 2, 1], minimum=2).reason == "every submitter passed"
    assert point_biserial([0, 0], [3, 2], minimum=2).reason == "every submitter scored 0"
    assert point_biserial([0.5, 0.5], [3, 2], minimum=2).reason == "every submitter scored the same"
    assert point_biserial([1, 0], [2, 2], minimum=2).reason == "every submitter scored the same on the rest"
    assert point_biserial([1], [2], minimum=2).reason == "too few submitters (1; it takes 2)"
    assert point_biserial([1], [2]).value is None


def test_discrimination_waits_for_enough_submitters():
    four = [1, 1, 0, 0], [7, 5, 1, 3]
    assert point_biserial(*four).value is None
    assert point_biserial(*four).reason == f"too few submitters (4; it takes {MIN_SUBMITTERS})"
    f = by_name(cell_stats(MANIFEST, ROWS))[(X, "test_f")]
    assert f.discrimination.value is None and not f.flagged
    assert f.remark == f"discrimination not computed: too few submitters (4; it takes {MIN_SUBMITTERS})"


def test_the_weakest_items_come_first():
    cells = sorted(cell_stats(MANIFEST, ROWS, minimum=2), key=lambda item: item.attention_order)
    assert [c.needs_a_look for c in cells] == sorted((c.needs_a_look for c in cells), reverse=True)
    weak = [c for c in cells if c.weak]
    assert all(c.share_earned < 0.5 for c in weak) and all(c.remark.startswith("weak: ") for c in weak)


def test_test_cells_of_the_fixture_cohort_by_hand():
    cells = by_name(cell_stats(MANIFEST, ROWS, minimum=2))
    # Only ann, bob, cai and dan count: eve failed, fay is flagged. Totals 10, 8, 1, 3.
    # test_f: scores 1 0 0 1, rest 8 8 1 1 (mean 4.5); deviations .5 -.5 -.5 .5 and 3.5 3.5 -3.5 -3.5:
    # covariance 1.75 - 1.75 + 1.75 - 1.75 = 0, so r = 0: it does not follow the rest at all.
    f = cells[(X, "test_f")]
    assert (f.submitted, f.full_marks, f.share_earned) == (4, 2, 0.5)
    assert f.discrimination.value == pytest.approx(0, abs=1e-9) and f.flagged
    # test_g: scores 1 1 0 0, rest 7 5 1 3: r = 4 / sqrt(20) (as in the test above).
    g = cells[(X, "test_g")]
    assert g.share_earned == 0.5 and g.discrimination.value == pytest.approx(4 / math.sqrt(20), abs=1e-9)
    assert not g.flagged and g.remark == ""
    # test_g2: scores 0 0 1 1, rest 10 8 0 2 (mean 5); deviations -.5 -.5 .5 .5 and 5 3 -5 -3:
    # covariance -2.5 - 1.5 - 2.5 - 1.5 = -8; spreads 1 and 25 + 9 + 25 + 9 = 68; r = -8 / sqrt(68).
    g2 = cells[(X, "test_g2")]
    assert g2.discrimination.value == pytest.approx(-8 / math.sqrt(68), abs=1e-9)
    assert g2.flagged and g2.remark.startswith("negative discrimination")


def test_a_student_who_did_not_submit_a_notebook_is_left_out_of_its_cells():
    # test_h: dan did not submit 020_y, so only ann, bob, cai: scores 1 1 0, share earned 2/3 (not 2/4).
    # rest 5 3 1 (mean 3), scores' mean 2/3: deviations 1/3 1/3 -2/3 and 2 0 -2;
    # covariance 2/3 + 0 + 4/3 = 2; spreads 2/3 and 8; r = 2 / sqrt(16/3) = sqrt(3) / 2.
    h = by_name(cell_stats(MANIFEST, ROWS, minimum=2))[(Y, "test_h")]
    assert h.submitted == 3
    assert h.share_earned == pytest.approx(2 / 3, abs=1e-9)
    assert h.discrimination.value == pytest.approx(math.sqrt(3) / 2, abs=1e-9)


def test_an_exercise_pools_its_test_cells():
    # answer_g (test_g + test_g2, 4 points): 3 3 1 1 points, shares .75 .75 .25 .25 (share earned .5);
    # rest 7 5 0 2 (mean 3.5); deviations .25 .25 -.25 -.25 and 3.5 1.5 -3.5 -1.5:
    # covariance .875 + .375 + .875 + .375 = 2.5; spreads .25 and 29; r = 2.5 / sqrt(.25 * 29) = 5 / sqrt(29).
    g = by_name(exercise_stats(MANIFEST, ROWS, minimum=2))[(X, "answer_g")]
    assert (g.points, g.submitted, g.full_marks) == (4, 4, 0)  # nobody earned all 4
    assert g.share_earned == pytest.approx(0.5, abs=1e-9)
    assert g.discrimination.value == pytest.approx(5 / math.sqrt(29), abs=1e-9)
