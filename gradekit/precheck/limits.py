"""Rate limits of the pre-check, per student and notebook: a cooldown between checks and a daily quota.

A check is counted when it is taken. A check the grader itself failed is
given back (`refund`), so a student never pays for the grader's trouble; but
only a few times a day per student (`REFUNDS_PER_DAY`): a failure their
notebook could provoke on purpose must not become an endless run of free
checks. What the limiter knows can be written out and read back
(`snapshot`, `restore`), so a restart of the service forgets none of it.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

from gradekit.precheck.refusals import Reason, Refusal

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (student, notebook)
REFUNDS_PER_DAY = 3  # grader failures given back per student and UTC day; later ones count as checks


def utc_day(seconds: float) -> datetime.date:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).date()


class RateLimiter:
    def __init__(
        self,
        cooldown_seconds: float,
        daily_quota: int,
        clock: Callable[[], float],
        refunds_per_day: int = REFUNDS_PER_DAY,
    ):
        self.cooldown_seconds = cooldown_seconds
        self.daily_quota = daily_quota
        self.clock = clock
        self.refunds_per_day = refunds_per_day
        self._last: dict[Key, float] = {}  # when the last counted check of a key was taken
        self._today: dict[Key, tuple[datetime.date, int]] = {}  # (day, checks counted that day)
        self._refunds: dict[str, tuple[datetime.date, int]] = {}  # student -> (day, refunds given that day)

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

    def refund(self, student: str, notebook: str, taken_at: float) -> bool:
        """Give back the check taken at `taken_at` if `student` has refunds left today; False when it stays counted."""
        today = utc_day(self.clock())
        day, given = self._refunds.get(student, (today, 0))
        given = given if day == today else 0
        if given >= self.refunds_per_day:
            return False
        self._refunds[student] = (today, given + 1)
        self.give_back(student, notebook, taken_at)
        return True

    def give_back(self, student: str, notebook: str, taken_at: float) -> None:
        """Undo the check taken at `taken_at`: it counts neither against the quota nor for the cooldown.

        Unbounded: for a check the service itself never ran (it stopped first), which no student can cause.
        """
        key = (student, notebook)
        day, used = self._today.get(key, (utc_day(taken_at), 0))
        if day == utc_day(taken_at) and used > 0:
            self._today[key] = (day, used - 1)
        if self._last.get(key) == taken_at:
            del self._last[key]

    def refunds_left(self, student: str) -> int:
        today = utc_day(self.clock())
        day, given = self._refunds.get(student, (today, 0))
        return self.refunds_per_day - (given if day == today else 0)

    def remaining_today(self, student: str, notebook: str) -> int:
        now = self.clock()
        day, used = self._today.get((student, notebook), (utc_day(now), 0))
        return self.daily_quota - (used if day == utc_day(now) else 0)

    # Kept across restarts ---------------------------------------------------------------------

    def snapshot(self) -> dict:
        """Everything the limiter knows, as JSON values; what no longer limits anyone is left out."""
        now = self.clock()
        today = utc_day(now)
        return {
            "last": [
                [student, notebook, when]
                for (student, notebook), when in self._last.items()
                if now - when < self.cooldown_seconds
            ],
            "today": [
                [student, notebook, day.isoformat(), used]
                for (student, notebook), (day, used) in self._today.items()
                if day == today
            ],
            "refunds": [
                [student, day.isoformat(), given] for student, (day, given) in self._refunds.items() if day == today
            ],
        }

    def restore(self, data: object) -> None:
        """Take back what `snapshot` wrote; an entry that cannot be read is logged and skipped."""
        if not isinstance(data, dict):
            log.error("the saved limits are not a JSON object: none restored")
            return
        for entry in _entries(data, "last", 3):
            student, notebook, when = entry
            if isinstance(student, str) and isinstance(notebook, str) and _number(when):
                self._last[(student, notebook)] = float(when)
            else:
                log.error("a saved cooldown could not be read: skipped")
        for entry in _entries(data, "today", 4):
            student, notebook, day, used = entry
            parsed = _day(day)
            if isinstance(student, str) and isinstance(notebook, str) and parsed and _count(used):
                self._today[(student, notebook)] = (parsed, used)
            else:
                log.error("a saved daily count could not be read: skipped")
        for entry in _entries(data, "refunds", 3):
            student, day, given = entry
            parsed = _day(day)
            if isinstance(student, str) and parsed and _count(given):
                self._refunds[student] = (parsed, given)
            else:
                log.error("a saved refund count could not be read: skipped")


def _entries(data: dict, name: str, size: int) -> list[list]:
    found = data.get(name, [])
    if not isinstance(found, list):
        log.error("the saved %s are not a list: none restored", name)
        return []
    return [entry for entry in found if isinstance(entry, list) and len(entry) == size]


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and abs(value) < 1e12


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**6


def _day(value: object) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
