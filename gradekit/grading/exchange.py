"""nbgrader's filesystem exchange, made where it is missing, with the modes of the hub deployment.

`nbgrader release_feedback` (the TA's step after `gradekit grade`) refuses to
run when the exchange root is missing ("Unwritable directory"). The root is
world-writable and sticky (nbgrader checks for 0777; sticky keeps one course
from removing another's folder); the course's inbound lets students drop a
submission without listing the others; its feedback folder lets a student
reach only the feedback whose name they know. Folders that exist are left as
they are: a hub's administrator may have set them up otherwise on purpose.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import MappingProxyType

ROOT_MODE = 0o1777
COURSE_MODES = MappingProxyType({"": 0o755, "outbound": 0o755, "inbound": 0o3733, "feedback": 0o711})


def ensure_exchange(root: Path, course_id: str) -> list[Path]:
    """Make the exchange root and the course's folders that are missing; return the folders made."""
    made = []
    if not root.exists():
        root.mkdir(parents=True)
        os.chmod(root, ROOT_MODE)  # mkdir's mode is cut by the umask
        made.append(root)
    for name, mode in COURSE_MODES.items():
        folder = root / course_id / name
        if not folder.exists():
            folder.mkdir(parents=True)
            os.chmod(folder, mode)
            made.append(folder)
    return made
