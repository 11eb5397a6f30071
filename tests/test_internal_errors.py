"""The grader's own failures: tracebacks land in one log written by the coordinator, rows point to it."""

import pytest

from gradekit.core.failures import GraderCause
from gradekit.core.status import Status
from gradekit.grading.internal_errors import crashed, record_internal_errors
from gradekit.grading.submission_grader import GradedSubmission

pytestmark = pytest.mark.unit


def _raise_in_our_code():
    raise KeyError("cell_timeout")


def _crash(student):
    try:
        _raise_in_our_code()
    except KeyError as error:
        return crashed(student, error, "host:1")


def _graded(student):
    return GradedSubmission(student_id=student, status=Status.GRADED, message="", record=None, files=(), seconds=0.0)


def test_a_crash_is_a_failed_row_carrying_its_traceback():
    row = _crash("ada")
    assert row.status is Status.GRADER_ERROR and row.cause is GraderCause.INTERNAL_ERROR
    assert "KeyError: 'cell_timeout'" in row.message
    assert "_raise_in_our_code" in row.internal_error and row.internal_error.startswith("Traceback")


def test_the_log_holds_one_block_per_student_and_rows_say_where(tmp_path):
    log = tmp_path / "class-report" / "internal-errors.log"
    outcomes = record_internal_errors({"ben": _crash("ben"), "ada": _crash("ada"), "cleo": _graded("cleo")}, log)
    text = log.read_text()
    assert text.index("==== ada: internal error while grading on worker host:1 ====") < text.index("==== ben:")
    assert text.count('raise KeyError("cell_timeout")') == 2 and "cleo" not in text
    assert all(str(log) in outcomes[s].message for s in ("ada", "ben"))
    assert outcomes["cleo"] == _graded("cleo")


def test_a_clean_run_removes_the_log_of_an_earlier_one(tmp_path):
    log = tmp_path / "internal-errors.log"
    log.write_text("old")
    outcomes = {"cleo": _graded("cleo")}
    assert record_internal_errors(outcomes, log) == outcomes and not log.exists()
