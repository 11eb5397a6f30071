"""The pre-check's audit log: one whole JSON line per event, appended, readable by the service alone.

What the desk records there (and what it never does) is tested with the desk (test_precheck_desk.py).
"""

import pytest

from gradekit.precheck.audit import AuditLog

pytestmark = pytest.mark.unit


def test_each_event_is_one_line_with_its_time_and_details_in_a_file_only_its_owner_reads(tmp_path):
    log = AuditLog(tmp_path / "state" / "audit.jsonl")  # its folder is made
    assert log.lines() == []
    log.record("ana", "010_history.ipynb", "taken")
    log.record("ana", "010_history.ipynb", "graded", score=1.0, max_score=2.0)
    lines = log.lines()
    assert [(line["student"], line["event"]) for line in lines] == [("ana", "taken"), ("ana", "graded")]
    assert lines[1]["score"] == 1.0 and lines[1]["max_score"] == 2.0
    assert all(line["time"].endswith("+00:00") for line in lines)  # UTC, whatever the machine's zone
    assert (log.path.stat().st_mode & 0o777) == 0o600


def test_a_second_log_on_the_same_file_appends_and_never_truncates(tmp_path):
    AuditLog(tmp_path / "audit.jsonl").record("ana", "010_history.ipynb", "taken")
    AuditLog(tmp_path / "audit.jsonl").record("ben", "010_history.ipynb", "refused", reason="cooldown")
    assert [line["student"] for line in AuditLog(tmp_path / "audit.jsonl").lines()] == ["ana", "ben"]


def test_a_link_put_where_the_log_goes_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("not the log's\n")
    (tmp_path / "audit.jsonl").symlink_to(target)
    with pytest.raises(OSError):
        AuditLog(tmp_path / "audit.jsonl").record("ana", "010_history.ipynb", "taken")
    assert target.read_text() == "not the log's\n"
