"""The pre-check's queue serves students round robin and never two checks of one student at once."""

import pytest

from gradekit.precheck.fair_queue import FairQueue

pytestmark = pytest.mark.unit


def test_a_student_with_many_checks_waiting_takes_turns_with_the_others():
    queue: FairQueue[str] = FairQueue()
    for item in ("a1", "a2", "a3"):
        queue.put("ana", item)
    queue.put("ben", "b1")
    queue.put("cai", "c1")
    served = []
    while (taken := queue.take()) is not None:
        served.append(taken[1])
        queue.done(taken[0])
    assert served == ["a1", "b1", "c1", "a2", "a3"]


def test_a_student_whose_check_is_running_is_skipped_until_it_is_done():
    queue: FairQueue[str] = FairQueue()
    queue.put("ana", "a1")
    queue.put("ana", "a2")
    queue.put("ben", "b1")
    assert queue.take() == ("ana", "a1")
    assert queue.take() == ("ben", "b1")
    assert queue.take() is None  # ana's a2 waits: a1 is still running
    queue.done("ana")
    assert queue.take() == ("ana", "a2")


def test_the_position_counts_the_checks_served_before_one_by_the_round_robin():
    queue: FairQueue[str] = FairQueue()
    for item in ("a1", "a2"):
        queue.put("ana", item)
    queue.put("ben", "b1")
    assert queue.position("ana", "a1") == 0
    assert queue.position("ben", "b1") == 1
    assert queue.position("ana", "a2") == 2
    assert len(queue) == 3
