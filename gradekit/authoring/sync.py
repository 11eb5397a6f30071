"""Write the source notebooks from their scripts (solutions/notebooks/) and the reference solutions."""

from __future__ import annotations

from pathlib import Path

import nbformat

from gradekit.authoring.render import render_script
from gradekit.core.course import Course
from gradekit.core.manifest import SCRIPTS_DIR


def scripts(scripts_dir: Path = SCRIPTS_DIR) -> list[Path]:
    """Every notebook script, in lesson order (their names start with the lesson number)."""
    return sorted(Path(scripts_dir).glob("*.py"))


def rendered_text(script: Path) -> str:
    """The notebook file the script renders to, byte for byte as it is committed."""
    return nbformat.writes(render_script(script)) + "\n"


def sync_notebooks(course: Course, scripts_dir: Path = SCRIPTS_DIR) -> list[str]:
    """Rewrite every source notebook that differs from its script; return the names of those rewritten."""
    changed = []
    for script in scripts(scripts_dir):
        target = course.source_dir / f"{script.stem}.ipynb"
        text = rendered_text(script)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
            changed.append(script.stem)
    return changed


def notebook_drift(source_dir: Path, scripts_dir: Path = SCRIPTS_DIR) -> list[str]:
    """Source notebooks that differ from what their scripts render, and notebooks without a script."""
    problems = []
    stems = set()
    for script in scripts(scripts_dir):
        stems.add(script.stem)
        target = Path(source_dir) / f"{script.stem}.ipynb"
        if not target.exists() or target.read_text() != rendered_text(script):
            problems.append(f"{script.stem}.ipynb differs from its script; run `python -m gradekit sync`")
    problems += [
        f"{path.name} has no script in solutions/notebooks/"
        for path in sorted(Path(source_dir).glob("*.ipynb"))
        if path.stem not in stems
    ]
    return problems
