"""Why a pre-check request was not taken: typed values, worded for the student at the edge (the HTTP reply)."""

from __future__ import annotations

import dataclasses
import enum


class Reason(enum.Enum):
    """Each reason is (its word in the reply's `error`, the HTTP status the service answers with)."""

    NOT_SIGNED_IN = ("not signed in", 401)
    FORGED = ("forged", 403)
    NOT_FOUND = ("not found", 404)
    UNKNOWN_NOTEBOOK = ("unknown notebook", 400)
    BAD_REQUEST = ("bad request", 400)
    REPLAYED = ("replayed", 409)
    STALE = ("stale", 409)
    CLOSED = ("closed", 403)
    BUSY = ("busy", 429)
    COOLDOWN = ("cooldown", 429)
    QUOTA = ("quota", 429)
    STARTING = ("starting", 503)

    @property
    def word(self) -> str:
        return self.value[0]

    @property
    def status(self) -> int:
        return self.value[1]


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A request the service will not act on, and the words that tell the student why."""

    reason: Reason
    message: str
    retry_after: float | None = None  # seconds, where waiting helps (cooldown, a check still running)
    # The student's own last answer for the notebook, so a reloaded page can still show what failed.
    last: dict | None = None

    def as_json(self) -> dict:
        body: dict = {"error": self.reason.word, "message": self.message}
        if self.retry_after is not None:
            body["retry_after"] = round(self.retry_after, 1)
        if self.last is not None:
            body["last"] = self.last
        return body
