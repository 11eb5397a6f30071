"""What graded a row: a digest of the checks it was graded by, the kit's version and the time.

A regrade after a check was fixed must say which rows were graded by the old check and which by
the new one. The checks are the assignment's source notebooks (their hidden tests) and the
course's helper modules beside them; the kit has no numbered releases, so its version is a
digest of its own code. Both digests are SHA-256, shortened to 16 hex digits for people to compare.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
from pathlib import Path
from typing import Iterable

KIT_PACKAGE = Path(__file__).resolve().parent.parent
SHOWN_DIGITS = 16


@dataclasses.dataclass(frozen=True)
class GradingStamp:
    checks_digest: str  # the source notebooks and helper modules the row was graded by
    kit_version: str  # the kit's code that graded it
    graded_at: str  # when the run started, ISO 8601 in UTC

    def words(self) -> dict[str, str]:
        return dataclasses.asdict(self)

    @classmethod
    def from_words(cls, words: dict) -> GradingStamp:
        return cls(str(words["checks_digest"]), str(words["kit_version"]), str(words["graded_at"]))


def files_digest(files: Iterable[Path], root: Path) -> str:
    """One digest of the files' paths (relative to `root`) and contents, in path order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:SHOWN_DIGITS]


def checks_digest(source_folder: Path, notebooks: Iterable[str]) -> str:
    """The digest of the named source notebooks of `source_folder` and the helper modules beside them."""
    folder = Path(source_folder)
    named = [folder / f"{name}.ipynb" for name in notebooks]
    helpers = folder.glob("*.py")
    return files_digest([path for path in (*named, *helpers) if path.is_file()], folder)


def kit_version() -> str:
    """The kit's version: a digest of its package's Python files."""
    return "gradekit-" + files_digest(KIT_PACKAGE.rglob("*.py"), KIT_PACKAGE)


def stamp_now(source_folder: Path, notebooks: Iterable[str], now: datetime.datetime | None = None) -> GradingStamp:
    """The stamp of a run that grades by `source_folder`'s notebooks, starting `now` (default: this moment)."""
    moment = (now or datetime.datetime.now(datetime.timezone.utc)).astimezone(datetime.timezone.utc)
    return GradingStamp(checks_digest(source_folder, notebooks), kit_version(), moment.isoformat(timespec="seconds"))
