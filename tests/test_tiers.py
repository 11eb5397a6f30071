"""The tiers hold: a unit test that starts a process is told which tier it belongs to."""

import subprocess
import sys

import pytest
from conftest import ProcessWatch

pytestmark = pytest.mark.nbgrader  # it starts processes to see them noted


def test_a_process_started_while_watched_is_noted_and_one_started_after_is_not():
    watch = ProcessWatch()
    watch.watching = True
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    watch.watching = False
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert len(watch.started) == 1 and watch.started[0].startswith("subprocess.Popen"), watch.started
