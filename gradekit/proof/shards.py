"""Autograde synthetic cohorts with real nbgrader, split over parallel workspaces."""
from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import re
import sys

from gradekit.course import Course
from gradekit.grading.gradebook import SubmissionGrades, read_grades
from gradekit.manifest import Manifest
from gradekit.nbgrader_cli import NbgraderError, run_nbgrader
from gradekit.proof.subjects import Subject, write_submission
from gradekit.authoring.release import clone_workspace


@dataclasses.dataclass(frozen=True)
class ShardRun:
    """What one nbgrader autograde run over a group of submissions left behind."""

    workspace: Course
    subjects: tuple[Subject, ...]
    error: str | None


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
    """Autograde the shard; a student nbgrader failed to process (not a failed test) is graded once more alone.

    Parallel nbgrader processes occasionally fail to start a kernel; a second
    attempt tells such a hiccup from a submission that really breaks grading.
    """
    try:
        run_nbgrader(shard, "autograde", shard.assignment_id, "--force")
        return ShardRun(shard, group, None)
    except NbgraderError as error:
        first = error
    failed = FAILED_STUDENT.findall(first.log)
    retried = []
    for student in dict.fromkeys(failed):
        try:
            run_nbgrader(shard, "autograde", shard.assignment_id, "--force", f"--student={student}")
            retried.append(student)
        except NbgraderError as error:
            first = error
            break
    else:
        if failed:
            print(f"note: nbgrader failed on {', '.join(retried)} once; a second attempt graded it", file=sys.stderr)
            return ShardRun(shard, group, None)
    log_file = shard.root / "autograde.log"
    log_file.write_text(first.log)
    return ShardRun(shard, group, f"{first}\n(whole log: {log_file})")


FAILED_STUDENT = re.compile(r"There was an error processing assignment '[^']*' for student '([^']+)'")
