"""Rewrite the answer cells of the source notebooks from the reference solutions (their single source of truth)."""
from __future__ import annotations

import nbformat

from gradekit.authoring.cells import cells_by_grade_id
from gradekit.authoring.consistency import rendered_answer
from gradekit.course import Course
from gradekit.manifest import Manifest


def sync_answers(course: Course, manifest: Manifest) -> list[str]:
    """Return the answer cells that changed, as `notebook/cell`."""
    changed = []
    for entry in manifest.notebooks:
        path = course.source_dir / f"{entry.name}.ipynb"
        notebook = nbformat.read(path, as_version=4)
        cells = cells_by_grade_id(notebook)
        for exercise in manifest.exercises_of(entry.name):
            expected = rendered_answer(manifest, entry.name, exercise.functions)
            cell = cells[exercise.answer_cell]
            if cell.source != expected:
                cell.source = expected
                changed.append(f"{entry.name}/{exercise.answer_cell}")
        if any(name.startswith(entry.name + "/") for name in changed):
            nbformat.write(notebook, path)
    return changed
