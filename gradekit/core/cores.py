"""How many cores this process may use: the default number of grading workers.

Its own module so that reading it (the command line's defaults) loads nothing of the engine.
"""

from __future__ import annotations

import os


def default_jobs() -> int:
    """One worker per core this process may use."""
    return max(1, len(os.sched_getaffinity(0)))
