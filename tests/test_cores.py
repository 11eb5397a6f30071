"""The default number of grading workers: one per core this process may use."""

import os

import pytest

from gradekit.core.cores import default_jobs

pytestmark = pytest.mark.unit


def test_one_worker_per_core_this_process_may_use(monkeypatch):
    assert default_jobs() == len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set())
    assert default_jobs() == 1  # never none
