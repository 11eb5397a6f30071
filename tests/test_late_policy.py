"""The late policy: a share per started period, a cap, and a hard cut-off after which a submission scores 0."""

import pytest
from traitlets import TraitError
from traitlets.config import Config

from gradekit.grading.late_policy import LatePolicy

pytestmark = pytest.mark.unit

HOUR, DAY = 3600, 86400


def policy(**traits) -> LatePolicy:
    config = Config()
    for name, value in traits.items():
        config.LatePolicy[name] = value
    return LatePolicy(config=config)


@pytest.mark.parametrize(
    "seconds_late, penalty",
    [(0, 0.0), (1, 1.0), (DAY, 1.0), (DAY + 1, 2.0), (4 * DAY + 1, 5.0), (6 * DAY, 5.0), (7 * DAY + 1, 10.0)],
)
def test_a_tenth_per_started_day_capped_at_half_and_zero_past_a_week(seconds_late, penalty):
    stated = policy(per="day", share_per_period=0.1, cap=0.5, cutoff_hours=7 * 24)
    assert stated.late_submission_penalty("ana", 10.0, seconds_late) == penalty
    assert stated.past_cutoff(seconds_late) is (seconds_late > 7 * DAY)


def test_per_hour_and_without_a_cut_off():
    stated = policy(per="hour", share_per_period=0.05)
    assert stated.late_submission_penalty("ana", 8.0, 2 * HOUR + 1) == pytest.approx(1.2)
    assert stated.late_submission_penalty("ana", 8.0, 100 * DAY) == 8.0  # the cap defaults to the whole score
    assert not stated.past_cutoff(100 * DAY)


def test_the_default_takes_nothing_and_says_so():
    assert policy().late_submission_penalty("ana", 10.0, 30 * DAY) == 0.0
    assert policy().describe() == "no late penalty"
    assert policy(share_per_period=0.1, cap=0.5, cutoff_hours=168).describe() == (
        "10% of the score per started day late, at most 50%; 0 after 168 h late"
    )


@pytest.mark.parametrize("name, value", [("share_per_period", 1.5), ("cap", -0.1), ("cutoff_hours", -1)])
def test_a_share_outside_0_to_1_or_a_negative_cut_off_is_refused(name, value):
    with pytest.raises(TraitError, match=f"LatePolicy.{name}"):
        LatePolicy(**{name: value})


def test_the_course_states_its_policy_and_nbgrader_uses_it(course):
    stated = LatePolicy(config=course.nbgrader_config)
    assert (stated.per, stated.share_per_period, stated.cap, stated.cutoff_hours) == ("day", 0.1, 0.5, 168.0)
    assert course.nbgrader_config.AssignLatePenalties.plugin_class.__name__ == "LatePolicy"
