"""A course directory of its own for a grading run, built from the committed source."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from gradekit.authoring.due_header import add_due_headers
from gradekit.core.course import Course
from gradekit.core.nbgrader_in_process import generate_assignment


def build_release(course: Course) -> Path:
    """Run real nbgrader's generate_assignment for `course`, in this process; returns the release folder."""
    generate_assignment(course)
    if course.due_date is not None:  # CourseKit.due_dates: the students read it at the top of each notebook
        add_due_headers(course.release_dir, course.due_date)
    return course.release_dir


def publish_release(course: Course) -> Path:
    """Regenerate the course's release/ from source/ in a scratch course.

    The course's own gradebook is left alone: nbgrader refuses to regenerate an
    assignment that already has submissions, and a release must not depend on that.
    """
    notebooks = tuple(path.stem for path in sorted(course.source_dir.glob("*.ipynb")))
    with tempfile.TemporaryDirectory(prefix="gradekit-release-") as scratch:
        fresh = new_workspace(course, Path(scratch), notebooks).release_dir
        if course.release_dir.exists():
            shutil.rmtree(course.release_dir)
        shutil.copytree(fresh, course.release_dir)
    return course.release_dir


def new_workspace(course: Course, root: Path, notebooks: tuple[str, ...]) -> Course:
    """Copy the assignment's support files and the named notebooks into `root`; generate release and gradebook there."""
    workspace = copy_source(course, root, notebooks)
    build_release(workspace)
    return workspace


def copy_source(course: Course, root: Path, notebooks: tuple[str, ...]) -> Course:
    """The course at `root` with the assignment's support files and the named source notebooks only."""
    moved = course.at(root)
    moved.root.mkdir(parents=True, exist_ok=True)
    keep = {f"{name}.ipynb" for name in notebooks}
    shutil.copytree(
        course.source_dir,
        moved.source_dir,
        ignore=lambda folder, names: (
            _generated_files(folder, names) | {n for n in names if n.endswith(".ipynb") and n not in keep}
        ),
    )
    return moved


def clone_workspace(workspace: Course, root: Path, folders: tuple[str, ...] = ("source", "release")) -> Course:
    """Another workspace with the same `folders` and gradebook, without regenerating them."""
    clone = workspace.at(root)
    clone.root.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        shutil.copytree(workspace.root / folder, clone.root / folder)
    shutil.copyfile(workspace.root / "gradebook.db", clone.root / "gradebook.db")
    return clone


_generated_files = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
