"""How the grader reads its kernel's guard log: only the regular file it made, never waiting, never all of a flood."""

import json
import os
import threading

import pytest

from gradekit.grading import guard_log
from gradekit.grading.guard_log import file_identity, read_log

pytestmark = pytest.mark.unit


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "kit-guard-test.jsonl"
    path.write_text(json.dumps({"armed": True}) + "\n")
    return path


def test_the_log_the_grader_made_is_read_whole(log):
    assert read_log(log, file_identity(log)) == ([{"armed": True}], "")


def test_a_file_put_in_the_logs_place_is_not_read(log, tmp_path):
    identity = file_identity(log)
    forged = tmp_path / "forged.jsonl"
    forged.write_text(json.dumps({"armed": True, "forged": True}) + "\n")
    os.replace(forged, log)
    assert read_log(log, identity) == ([], "is not the file the grader made")


def test_a_fifo_in_the_logs_place_is_refused_without_waiting(log):
    identity = file_identity(log)
    log.unlink()
    os.mkfifo(log)
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(read_log(log, identity)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert outcome == [([], "is not a regular file")]


def test_a_link_in_the_logs_place_is_not_followed(log, tmp_path):
    identity = file_identity(log)
    target = tmp_path / "elsewhere.jsonl"
    log.rename(target)
    log.symlink_to(target)
    assert read_log(log, identity) == ([], "could not be opened (Too many levels of symbolic links)")
    assert file_identity(log) is None


def test_a_log_past_the_cap_is_read_up_to_it(log, monkeypatch):
    monkeypatch.setattr(guard_log, "MAX_LOG_BYTES", 2**20)
    with log.open("a") as handle:
        handle.write((json.dumps({"refused": "open", "reason": "x" * 100}) + "\n") * 20_000)
    records, problem = read_log(log, file_identity(log))
    assert problem == "is larger than 1 MiB (read that far)"
    assert records[0] == {"armed": True} and 1 < len(records) < 20_000


def test_a_missing_log_gives_nothing_to_complain_of(tmp_path):
    assert read_log(tmp_path / "never-made.jsonl", None) == ([], "")
