"""Each pre-check request carries a nonce and the time it was sent: a request sent twice is refused.

A nonce is remembered for the request window; a request older than the window
(or from further ahead than it) is refused as stale, so a nonce forgotten
after the window cannot be replayed either. The nonces still inside the
window can be written out and read back (`snapshot`, `restore`), so a restart
of the service does not open a replay.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable

from gradekit.precheck.refusals import Reason, Refusal

log = logging.getLogger(__name__)

NONCE = re.compile(r"[A-Za-z0-9_-]{16,128}")


class NonceBook:
    def __init__(self, window_seconds: float, clock: Callable[[], float]):
        self.window_seconds = window_seconds
        self.clock = clock
        self._seen: dict[str, float] = {}  # nonce -> when it was accepted
        self.accepted = 0  # nonces accepted since start: tells a caller whether a request used one up

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
        self.accepted += 1
        return None

    def _forget_before(self, moment: float) -> None:
        for nonce in [n for n, when in self._seen.items() if when < moment]:
            del self._seen[nonce]

    def snapshot(self) -> dict:
        """The nonces still inside the window, with when each was accepted."""
        self._forget_before(self.clock() - self.window_seconds)
        return {"seen": dict(self._seen)}

    def restore(self, data: object) -> None:
        """Take back what `snapshot` wrote; what cannot be read is logged and skipped, what is out of the window dropped."""
        seen = data.get("seen") if isinstance(data, dict) else None
        if not isinstance(seen, dict):
            log.error("the saved nonces cannot be read: none restored")
            return
        for nonce, when in seen.items():
            if isinstance(nonce, str) and NONCE.fullmatch(nonce) and _finite(when):
                self._seen[nonce] = float(when)
            else:
                log.error("a saved nonce could not be read: skipped")
        self._forget_before(self.clock() - self.window_seconds)

    def __len__(self) -> int:
        return len(self._seen)


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
