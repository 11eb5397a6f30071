"""Rate limits of the pre-check, per student and notebook: a cooldown between checks and a daily quota.

A check is counted when it is taken; a check the grader itself failed is given
back (`refund`), so a student never pays for the grader's trouble.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from gradekit.precheck.refusals import Reason, Refusal

Key = tuple[str, str]  # (student, notebook)


def utc_day(seconds: float) -> datetime.date:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).date()


class RateLimiter:
    def __init__(self, cooldown_seconds: float, daily_quota: int, clock: Callable[[], float]):
        self.cooldown_seconds = cooldown_seconds
        self.daily_quota = daily_quota
        self.clock = clock
        self._last: dict[Key, float] = {}  # when the last counted check of a key was taken
        self._today: dict[Key, tuple[datetime.date, int]] = {}  # (day, checks counted that day)

    def refusal(self, student: str, notebook: str) -> Refusal | None:
        """Why `student` may not pre-check `notebook` now, or None when they may."""
        now = self.clock()
        key = (student, notebook)
        day, used = self._today.get(key, (utc_day(now), 0))
        if day == utc_day(now) and used >= self.daily_quota:
            tomorrow = datetime.datetime.combine(
                day + datetime.timedelta(days=1), datetime.time(), datetime.timezone.utc
            )
            return Refusal(
                Reason.QUOTA,
                f"You have used today's {self.daily_quota} pre-checks of {notebook}.ipynb; "
                "the count starts again at midnight UTC. Your visible checks still run in the notebook.",
                tomorrow.timestamp() - now,
            )
        last = self._last.get(key)
        if last is not None and now - last < self.cooldown_seconds:
            wait = self.cooldown_seconds - (now - last)
            return Refusal(
                Reason.COOLDOWN,
                f"{notebook}.ipynb was pre-checked {now - last:.0f} s ago; you can pre-check it again in {wait:.0f} s.",
                wait,
            )
        return None

    def take(self, student: str, notebook: str, now: float | None = None) -> None:
        """Count one check of `notebook` by `student`, at `now` (the clock's time unless given)."""
        now = self.clock() if now is None else now
        key = (student, notebook)
        day, used = self._today.get(key, (utc_day(now), 0))
        self._today[key] = (utc_day(now), used + 1 if day == utc_day(now) else 1)
        self._last[key] = now

    def refund(self, student: str, notebook: str, taken_at: float) -> None:
        """Give back the check taken at `taken_at`: it does not count against the quota nor start a cooldown."""
        key = (student, notebook)
        day, used = self._today.get(key, (utc_day(taken_at), 0))
        if day == utc_day(taken_at) and used > 0:
            self._today[key] = (day, used - 1)
        if self._last.get(key) == taken_at:
            del self._last[key]

    def remaining_today(self, student: str, notebook: str) -> int:
        now = self.clock()
        day, used = self._today.get((student, notebook), (utc_day(now), 0))
        return self.daily_quota - (used if day == utc_day(now) else 0)
