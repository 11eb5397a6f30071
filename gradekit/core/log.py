"""The kit's one logging setup: every module logs to `logging.getLogger(__name__)`, under "gradekit".

Quiet by default (warnings and errors only); the command line's `-v` shows what the kit
is doing, `-vv` its details. Messages go to stderr, so a command's own results on stdout
stay clean for pipes.
"""

from __future__ import annotations

import logging
import sys
import warnings

KIT_LOGGER = "gradekit"
FORMAT = "%(levelname)s %(name)s: %(message)s"
LEVELS = (logging.WARNING, logging.INFO, logging.DEBUG)  # by the number of -v


# nbgrader 0.9.6 adds rows to its gradebook through relationships during SQLAlchemy's autoflush,
# which SQLAlchemy 2 reports as "Object of type <...> not in session": nbgrader's habit, harmless
# to the records it writes, and not ours to fix. Only that message of that class is hushed.
GRADEBOOK_NOTE = r"Object of type <\w+> not in session"


def hush_known_noise() -> None:
    """Keep the notes of nbgrader's gradebook off the terminal (in this process; workers call it too)."""
    try:
        from sqlalchemy.exc import SAWarning
    except ImportError:  # pragma: no cover - sqlalchemy comes with nbgrader
        return
    warnings.filterwarnings("ignore", message=GRADEBOOK_NOTE, category=SAWarning)


def level_for(verbosity: int) -> int:
    return LEVELS[max(0, min(verbosity, len(LEVELS) - 1))]


def configure(verbosity: int = 0) -> logging.Logger:
    """Show the kit's messages at the level `verbosity` asks for, on the stderr of this moment.

    Called again (by tests, or a second command in one process), it replaces its own handler.
    """
    logger = logging.getLogger(KIT_LOGGER)
    for handler in [h for h in logger.handlers if getattr(h, "kit_handler", False)]:
        logger.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.kit_handler = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(level_for(verbosity))
    hush_known_noise()
    return logger
