"""A due date in a student's words: "due Friday 18 December 23:00 UTC, in 2 days", or "... 3 h ago"."""

from __future__ import annotations

import datetime

UTC = datetime.timezone.utc


def due_line(due: datetime.datetime, now: datetime.datetime) -> str:
    """When the work is due, in UTC, and how long until then (or since)."""
    return f"due {when(due)}, {relative(due - now)}"


def when(due: datetime.datetime) -> str:
    """ "Friday 18 December 2026, 23:00 UTC" """
    moment = due.astimezone(UTC)
    return f"{moment:%A} {moment.day} {moment:%B %Y}, {moment:%H:%M} UTC"


def relative(left: datetime.timedelta) -> str:
    """ "in 2 days", "in 5 h", "in 12 min", "2 days ago": the largest whole unit, rounded down."""
    seconds = abs(left.total_seconds())
    days, hours, minutes = int(seconds // 86400), int(seconds // 3600), int(seconds // 60)
    if days:
        amount = f"{days} day" + ("s" if days > 1 else "")
    elif hours:
        amount = f"{hours} h"
    else:
        amount = f"{max(minutes, 1)} min"
    return f"in {amount}" if left.total_seconds() > 0 else f"{amount} ago"
