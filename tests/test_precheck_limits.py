"""The pre-check's rate limits: a cooldown per student and notebook, a daily quota, and a few grader failures a day given back."""

import pytest
from precheck_fixtures import Clock

from gradekit.precheck.limits import RateLimiter
from gradekit.precheck.refusals import Reason

pytestmark = pytest.mark.unit


def test_a_second_check_within_the_cooldown_is_refused_with_the_wait_left():
    clock = Clock()
    limits = RateLimiter(cooldown_seconds=60, daily_quota=5, clock=clock)
    limits.take("ana", "010_history")
    clock.now += 20
    refusal = limits.refusal("ana", "010_history")
    assert refusal is not None and refusal.reason is Reason.COOLDOWN
    assert refusal.retry_after == pytest.approx(40)
    assert "again in 40 s" in refusal.message


def test_the_cooldown_is_per_student_and_per_notebook_and_ends():
    clock = Clock()
    limits = RateLimiter(cooldown_seconds=60, daily_quota=5, clock=clock)
    limits.take("ana", "010_history")
    assert limits.refusal("ben", "010_history") is None
    assert limits.refusal("ana", "020_leaves") is None
    clock.now += 60
    assert limits.refusal("ana", "010_history") is None


def test_the_daily_quota_refuses_the_check_after_the_last_and_starts_again_the_next_utc_day():
    clock = Clock(1_800_000_000.0)  # 2027-01-15 08:00 UTC
    limits = RateLimiter(cooldown_seconds=0, daily_quota=2, clock=clock)
    limits.take("ana", "010_history")
    limits.take("ana", "010_history")
    refusal = limits.refusal("ana", "010_history")
    assert refusal is not None and refusal.reason is Reason.QUOTA
    assert refusal.retry_after == pytest.approx(16 * 3600)  # until midnight UTC
    assert limits.remaining_today("ana", "010_history") == 0
    clock.now += 16 * 3600
    assert limits.refusal("ana", "010_history") is None
    assert limits.remaining_today("ana", "010_history") == 2


def test_a_refunded_check_counts_neither_against_the_quota_nor_for_the_cooldown():
    clock = Clock()
    limits = RateLimiter(cooldown_seconds=60, daily_quota=1, clock=clock)
    limits.take("ana", "010_history")
    limits.refund("ana", "010_history", taken_at=clock.now)
    assert limits.refusal("ana", "010_history") is None
    assert limits.remaining_today("ana", "010_history") == 1


def test_refunds_are_bounded_per_student_and_day_then_a_check_stays_counted():
    clock = Clock()
    limits = RateLimiter(cooldown_seconds=60, daily_quota=10, clock=clock, refunds_per_day=2)
    given = []
    for _ in range(3):
        limits.take("ana", "010_history", clock.now)
        given.append(limits.refund("ana", "010_history", taken_at=clock.now))
    assert given == [True, True, False]
    assert limits.refusal("ana", "010_history").reason is Reason.COOLDOWN
    assert limits.remaining_today("ana", "010_history") == 9
    assert limits.refunds_left("ben") == 2
    clock.now += 24 * 3600
    assert limits.refunds_left("ana") == 2


def test_what_the_limits_know_is_read_back_whole_and_a_bad_entry_is_skipped():
    clock = Clock()
    limits = RateLimiter(cooldown_seconds=60, daily_quota=2, clock=clock)
    limits.take("ana", "010_history")
    limits.take("ana", "010_history")
    saved = limits.snapshot()
    saved["last"].append(["ben", "010_history", "not a time"])
    again = RateLimiter(cooldown_seconds=60, daily_quota=2, clock=clock)
    again.restore(saved)
    assert again.refusal("ana", "010_history").reason is Reason.QUOTA
    assert again.refusal("ben", "010_history") is None
    again.restore("not even an object")  # logged, not raised
