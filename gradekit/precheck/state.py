"""What the pre-check must not forget across a restart, kept as JSON files in a folder of the service's own (0700).

Each file is written whole or not at all: a temporary file in the same
folder, flushed to the disk, then renamed over the old one, whose previous
version is kept beside it. A file that cannot be read (damaged on the disk,
or left by another version) is reported in the log and its previous version
is read instead; when neither can be read, nothing of it is restored and the
service starts all the same.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

PREVIOUS = ".previous"


class StateFolder:
    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.folder, 0o700)  # results and the students' limits are nobody else's business

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.json"

    def write(self, name: str, data: object) -> None:
        """Replace the file `name` with `data`, atomically: a reader sees the old version or the new one, never a part."""
        target = self.path(name)
        encoded = json.dumps(data, sort_keys=True).encode()
        descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(descriptor, "wb") as written:
                written.write(encoded)
                written.flush()
                os.fsync(written.fileno())
            if target.exists():
                os.replace(target, target.with_name(target.name + PREVIOUS))
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _sync_folder(self.folder)

    def read(self, name: str) -> object | None:
        """What the file `name` holds, else its previous version, else None; a damaged file is reported, never raised."""
        target = self.path(name)
        for path in (target, target.with_name(target.name + PREVIOUS)):
            try:
                return json.loads(path.read_bytes())
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as error:
                log.error("the pre-check's saved state %s cannot be read (%s): it is left out", path.name, error)
        return None

    def names(self, prefix: str) -> list[str]:
        """The names of the files whose name starts with `prefix` (one whose rename was cut short included)."""
        found = {
            path.name.removesuffix(PREVIOUS).removesuffix(".json") for path in self.folder.glob(f"{prefix}*.json*")
        }
        return sorted(found)


def student_file(student: str) -> str:
    """A file name for `student`'s results that holds no character of their name (any hub name is safe)."""
    return "results-" + hashlib.sha256(student.encode()).hexdigest()[:32]


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
