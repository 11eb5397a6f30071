"""Autograde synthetic cohorts with real nbgrader, split over parallel workspaces."""
from __future__ import annotations

import concurrent.futures
import dataclasses
import os
from pathlib import Path

from gradekit.course import Course
from gradekit.gradebook import SubmissionGrades, read_grades
from gradekit.manifest import Manifest
from gradekit.nbgrader_cli import NbgraderError, run_nbgrader
from gradekit.submissions import Subject, write_submission
from gradekit.workspace import clone_workspace


@dataclasses.dataclass(frozen=True)
class ShardRun:
    """What one nbgrader autograde run over a group of submissions left behind."""

    workspace: Course
    subjects: tuple[Subject, ...]
    error: str | None


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def split_evenly(subjects: tuple[Subject, ...], jobs: int) -> list[tuple[Subject, ...]]:
    """Deal subjects to at most `jobs` groups so that each grades about as many notebooks."""
    groups: list[list[Subject]] = [[] for _ in range(max(1, min(jobs, len(subjects))))]
    loads = [0] * len(groups)
    for subject in sorted(subjects, key=lambda s: -len(s.notebooks)):
        lightest = loads.index(min(loads))
        groups[lightest].append(subject)
        loads[lightest] += len(subject.notebooks)
    return [tuple(g) for g in groups if g]


def grade_subjects(
    workspace: Course, manifest: Manifest, subjects: tuple[Subject, ...], jobs: int
) -> tuple[list[ShardRun], dict[str, SubmissionGrades]]:
    """Write every subject's submission, autograde them in `jobs` parallel workspaces, read the grades."""
    groups = split_evenly(subjects, jobs)
    shards = [
        workspace if index == 0 else clone_workspace(workspace, workspace.root / f"shard-{index}")
        for index in range(len(groups))
    ]
    for shard, group in zip(shards, groups):
        for subject in group:
            write_submission(shard, workspace.release_dir, manifest, subject)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(shards)) as pool:
        runs = list(pool.map(_autograde, shards, groups))
    grades = {
        subject.student_id: read_grades(run.workspace, subject.student_id)
        for run in runs
        for subject in run.subjects
    }
    return runs, grades


def _autograde(shard: Course, group: tuple[Subject, ...]) -> ShardRun:
    try:
        run_nbgrader(shard, "autograde", shard.assignment_id, "--force")
    except NbgraderError as error:
        return ShardRun(shard, group, str(error))
    return ShardRun(shard, group, None)


def autograded_notebook(run: ShardRun, student_id: str, notebook: str) -> Path:
    return run.workspace.autograded_dir / student_id / run.workspace.assignment_id / f"{notebook}.ipynb"
