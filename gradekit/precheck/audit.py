"""Who pre-checked what and when: one JSON line per request in an append-only file, kept apart from the gradebook.

A line records the student, the notebook, what became of the request (taken,
refused and why, graded with its score) and the time in UTC; never the
notebook's content nor any diagnosis.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
from pathlib import Path


class AuditLog:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, student: str, notebook: str, event: str, **details: object) -> None:
        line = {
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "student": student,
            "notebook": notebook,
            "event": event,
            **details,
        }
        data = (json.dumps(line, sort_keys=True) + "\n").encode()
        # Append-only, readable by the service's account alone; the lock keeps lines whole across processes.
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            os.write(descriptor, data)
        finally:
            os.close(descriptor)

    def lines(self) -> list[dict]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]
