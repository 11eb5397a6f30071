"""The soak's load: CPU hogs and held memory for as long as it runs, and nothing left after."""

import os

import pytest

from gradekit.commands.soak_load import Load
from gradekit.commands.soak_processes import read_entry


@pytest.mark.nbgrader
def test_the_load_runs_its_hogs_and_its_memory_until_it_ends_then_none_is_left():
    with Load(hogs=2, memory_bytes=2**20) as load:
        entries = [read_entry(pid) for pid in load.pids]
        assert len(entries) == 3 and all(entries)
        assert {entry.parent for entry in entries} == {os.getpid()}
    assert all(read_entry(pid) is None for pid in load.pids)
