"""How the grader writes a request: into the file it made, whatever is later put at that path."""

import os

import pytest

from gradekit.grading.safe_execute import SafeExecute
from gradekit.sandbox.crossing import CrossingError

pytestmark = pytest.mark.unit


def _writer():
    writer = SafeExecute()
    writer._request = None
    return writer


def test_each_request_replaces_the_last_in_the_same_file(tmp_path):
    request = tmp_path / "request"
    request.touch()
    made = request.stat().st_ino
    writer = _writer()
    writer._write_request(request, b"a longer first request")
    writer._write_request(request, b"second")
    assert request.read_bytes() == b"second" and request.stat().st_ino == made


def test_a_link_put_at_the_path_later_is_never_written_through(tmp_path):
    request, elsewhere = tmp_path / "request", tmp_path / "grades.csv"
    request.touch()
    elsewhere.write_bytes(b"student,score\n")
    writer = _writer()
    writer._write_request(request, b"first")
    held = os.fstat(writer._request).st_ino
    request.unlink()
    request.symlink_to(elsewhere)
    writer._write_request(request, b"second")
    assert elsewhere.read_bytes() == b"student,score\n"
    assert os.fstat(writer._request).st_ino == held


def test_something_other_than_a_file_at_the_path_is_refused(tmp_path):
    request = tmp_path / "request"
    os.mkfifo(request)
    with pytest.raises(OSError):  # a FIFO with no reader: refused at once, never waited on
        _writer()._write_request(request, b"first")
    request.unlink()
    request.mkdir()
    with pytest.raises((OSError, CrossingError)):
        _writer()._write_request(request, b"first")
