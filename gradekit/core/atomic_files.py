"""Files written whole or not at all: a reader (a TA's browser, an LMS import) never meets half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, content: bytes) -> None:
    """Write `content` beside `path` under a hidden name, then move it into place in one step."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
