"""A test run that leaves one of the kit's scratch folders in the temporary folder is told which; one that cleaned
up, or whose straggling processes clean up within the grace, is not."""

import tempfile
import threading
from pathlib import Path

import pytest
from leftovers import kit_folders, left_behind, main

pytestmark = pytest.mark.unit


def test_a_scratch_folder_made_since_the_start_and_still_there_is_named(tmp_path):
    places = [tmp_path]  # not the machine's /tmp, where a test running beside this one makes its own
    before = kit_folders(places)
    (tmp_path / "someone-elses").mkdir()
    left = tmp_path / "gradekit-run-abc"
    left.mkdir()
    assert kit_folders(places) == {left}
    assert left_behind(before, 0.0, places) == [left]
    assert left_behind(before | {left}, 0.0, places) == []  # there before the session: not its own


def test_by_default_the_temporary_folder_is_looked_in(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / "kit-kernels-abc").mkdir()
    assert tmp_path / "kit-kernels-abc" in kit_folders()


def test_one_removed_within_the_grace_is_not_named(tmp_path):
    before = kit_folders([tmp_path])
    straggler = tmp_path / "kit-kernels-xyz"
    straggler.mkdir()
    cleanup = threading.Timer(0.3, straggler.rmdir)  # as a worker still exiting removes its folder
    cleanup.start()
    try:
        assert left_behind(before, 10.0, [tmp_path]) == []
    finally:
        cleanup.join()
    assert not Path(straggler).exists()


def test_the_command_notes_what_is_there_then_fails_only_on_what_the_run_left(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr("leftovers.GRACE_SECONDS", 0.0)
    (tmp_path / "gradekit-run-older").mkdir()
    record = tmp_path / "noted.txt"
    assert main(["note", str(record)]) == 0
    assert main(["check", str(record)]) == 0
    (tmp_path / "kit-kernels-new").mkdir()
    assert main(["check", str(record)]) == 1
    assert "left this in the temporary folder" in capsys.readouterr().err
