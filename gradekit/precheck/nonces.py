"""Each pre-check request carries a nonce and the time it was sent: a request sent twice is refused.

A nonce is remembered for the request window; a request older than the window
(or from further ahead than it) is refused as stale, so a nonce forgotten
after the window cannot be replayed either.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from gradekit.precheck.refusals import Reason, Refusal

NONCE = re.compile(r"[A-Za-z0-9_-]{16,128}")


class NonceBook:
    def __init__(self, window_seconds: float, clock: Callable[[], float]):
        self.window_seconds = window_seconds
        self.clock = clock
        self._seen: dict[str, float] = {}  # nonce -> when it was accepted

    def accept(self, nonce: object, sent: object) -> Refusal | None:
        """None when the request is fresh (and the nonce is now used up), else why it is refused."""
        if not isinstance(nonce, str) or not NONCE.fullmatch(nonce):
            return Refusal(Reason.BAD_REQUEST, "the request carries no valid nonce (16 to 128 letters, digits, - or _)")
        if isinstance(sent, bool) or not isinstance(sent, (int, float)) or not math.isfinite(sent):
            return Refusal(Reason.BAD_REQUEST, "the request does not say when it was sent (`sent`, seconds since 1970)")
        now = self.clock()
        self._forget_before(now - self.window_seconds)
        if abs(now - sent) > self.window_seconds:
            return Refusal(
                Reason.STALE,
                f"the request was sent {abs(now - sent):.0f} s from the service's time, more than the "
                f"{self.window_seconds:.0f} s allowed: send a new one (check the computer's clock)",
            )
        if nonce in self._seen:
            return Refusal(Reason.REPLAYED, "this request was already received once (its nonce is used): not run again")
        self._seen[nonce] = now
        return None

    def _forget_before(self, moment: float) -> None:
        for nonce in [n for n, when in self._seen.items() if when < moment]:
            del self._seen[nonce]

    def __len__(self) -> int:
        return len(self._seen)
