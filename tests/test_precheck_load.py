"""The pre-check load's figures: percentiles of the times to a result, its verdict, and the lines it prints."""

import math

import pytest

from gradekit.commands.precheck_load import CohortLoad, LoadResult, load_lines

pytestmark = pytest.mark.unit


def cohort(students, times, rejected=None, unanswered=0):
    rejected = students if rejected is None else rejected
    return CohortLoad(students, tuple(times), rejected, unanswered, wall_seconds=12.5)


def test_the_percentiles_come_from_the_times_of_the_students_who_got_a_result():
    ten = cohort(10, [float(s) for s in range(1, 11)])
    assert ten.p50 == pytest.approx(5.5) and ten.p95 == pytest.approx(9.55)
    assert cohort(1, [3.0]).p50 == 3.0 == cohort(1, [3.0]).p95
    assert math.isnan(cohort(5, [], unanswered=5).p50)


def test_a_run_holds_only_when_everyone_was_answered_and_every_second_request_met_the_cooldown():
    def result(*cohorts):
        return LoadResult("010_history", workers=2, cores=2, lone_first_result=1.5, cohorts=cohorts)

    assert result(cohort(2, [1.0, 2.0]), cohort(3, [1.0, 2.0, 3.0])).ok
    assert not result(cohort(2, [1.0], unanswered=1)).ok
    assert not result(cohort(2, [1.0, 2.0], rejected=1)).ok


def test_the_lines_say_the_service_the_lone_student_then_one_row_per_cohort():
    result = LoadResult("010_history", 2, 2, 1.234, (cohort(10, [1.0] * 10), cohort(50, [2.0] * 48, 50, 2)), 0.5)
    lines = load_lines(result)
    assert lines[0] == "pre-check load on 010_history: 2 grading processes, 2 cores, load 0.5 at the start"
    assert lines[1] == "one student alone, service warm: first result in 1.23 s"
    assert lines[3].split() == [
        "students",
        "p50",
        "s",
        "p95",
        "s",
        "rejected",
        "for",
        "cooldown",
        "unanswered",
        "wall",
        "s",
    ]
    assert [line.split() for line in lines[4:]] == [
        ["10", "1.00", "1.00", "10", "0", "12.5"],
        ["50", "2.00", "2.00", "50", "2", "12.5"],
    ]
