"""The benchmark's per-notebook floor starts its kernels as nbgrader_config.py says nbgrader's start."""

import shutil

import pytest

from gradekit.authoring.release import copy_source
from gradekit.commands.benchmark import notebook_floors

pytestmark = pytest.mark.notebook

NOTEBOOK = "010_history"


def test_the_floor_runs_a_notebook_in_an_encrypted_kernel_that_prints_no_warning(course, manifest, tmp_path, capfd):
    scratch = copy_source(course, tmp_path / "course", (NOTEBOOK,))
    shutil.copytree(course.release_dir, scratch.release_dir)
    floors = notebook_floors(scratch, manifest.only([NOTEBOOK]))
    assert list(floors) == [NOTEBOOK] and floors[NOTEBOOK] > 0
    printed = capfd.readouterr()
    assert "without encryption" not in printed.out + printed.err
