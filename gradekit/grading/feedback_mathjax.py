"""A local copy of MathJax beside the feedback pages, so math is typeset when a page is opened from disk.

The pages load MathJax from the student's Jupyter server when they are served
(jupyter-server-mathjax serves it there); opened from disk (the TA following the
class report's links, or anyone double-clicking a page), they load it from
`<feedback>/.mathjax/`, copied here from that same package once per version. The
dot keeps nbgrader from taking the folder for a student. Nothing is fetched from
the network either way.
"""

from __future__ import annotations

import shutil
from importlib.metadata import version
from pathlib import Path

import jupyter_server_mathjax

FOLDER = ".mathjax"
STAMP = "VERSION"
PACKAGE = "jupyter-server-mathjax"
# The translations of MathJax's menus are a sixth of its files; the pages use its English.
LEFT_OUT = ("localization",)


def mathjax_source() -> Path:
    return Path(jupyter_server_mathjax.__file__).parent / "static"


def bundle_mathjax(feedback_dir: Path) -> Path:
    """Copy MathJax into `feedback_dir` unless the same version is there already; returns the copy's folder."""
    target = Path(feedback_dir) / FOLDER
    wanted = version(PACKAGE)
    stamp = target / STAMP
    if stamp.is_file() and stamp.read_text().strip() == wanted:
        return target
    if target.exists():
        shutil.rmtree(target)
    partial = target.with_name(FOLDER + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    shutil.copytree(mathjax_source(), partial, ignore=shutil.ignore_patterns(*LEFT_OUT))
    (partial / STAMP).write_text(wanted + "\n")
    partial.rename(target)  # whole or not at all: a page never finds half a copy
    return target
