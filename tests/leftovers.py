"""What a test run leaves in the temporary folder: the kit's scratch folders (a grading run's, a kernel's, a
grading process's, a scratch course holding hidden tests) belong to the run that made them.

`make test` notes them before the run (`python tests/leftovers.py note FILE`) and, once every test process has
exited (a zygote's folder goes with its process's exit), fails naming any of the run's own still there
(`python tests/leftovers.py check FILE`).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

PREFIXES = ("gradekit-", "kit-kernels-")
# Processes still exiting when the run ends (a cluster's workers, a pool's) remove theirs as they go.
GRACE_SECONDS = 15.0


def kit_folders(places: Iterable[Path] = ()) -> set[Path]:
    """The kit's scratch entries in `places`: by default the temporary folder, and /tmp (where kernels' folders
    go when the temporary folder's path is long)."""
    places = set(places) or {Path(tempfile.gettempdir()), Path("/tmp")}
    return {entry for place in places if place.is_dir() for entry in place.iterdir() if entry.name.startswith(PREFIXES)}


def left_behind(before: set[Path], grace_seconds: float = GRACE_SECONDS, places: Iterable[Path] = ()) -> list[Path]:
    """What appeared since `before` and is still there once `grace_seconds` have let ending processes clean up."""
    deadline = time.monotonic() + grace_seconds
    while (left := kit_folders(places) - before) and time.monotonic() < deadline:
        time.sleep(0.5)
    return sorted(left)


def main(argv: list[str]) -> int:
    """`note FILE`: write what is there now; `check FILE`: fail, naming them, if the run left any of its own."""
    command, record = argv[0], Path(argv[1])
    if command == "note":
        record.write_text("".join(f"{path}\n" for path in sorted(kit_folders())))
        return 0
    before = {Path(line) for line in record.read_text().splitlines() if line}
    left = left_behind(before, GRACE_SECONDS)
    for path in left:
        print(f"the test run left this in the temporary folder: {path}", file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
