"""A check whose worker was lost is sent again up to the kit's attempts, and its row counts every start."""

import pytest
from precheck_fixtures import graded, run_apart

from gradekit.core.failures import GraderCause
from gradekit.core.status import Status
from gradekit.precheck.tries import Try, graded_within_attempts

pytestmark = pytest.mark.unit


def _sent(*tries: Try):
    """A sender that gives back `tries` in turn, and the list of how often it was called."""
    calls: list[int] = []

    async def send() -> Try:
        calls.append(1)
        return tries[len(calls) - 1]

    return send, calls


def test_a_check_lost_once_is_graded_by_the_next_try_and_says_it_took_two():
    send, calls = _sent(Try(None), Try(graded(2.0)))
    row = run_apart(graded_within_attempts(send, "ana", attempts=3, first_wait=0.0))
    assert row.status is Status.GRADED and row.attempts == 2 and len(calls) == 2


def test_the_moves_a_cluster_made_by_itself_count_as_tries():
    send, _ = _sent(Try(graded(2.0), starts=3))
    row = run_apart(graded_within_attempts(send, "ana", attempts=3, first_wait=0.0))
    assert row.status is Status.GRADED and row.attempts == 3


def test_a_check_lost_on_every_try_is_the_graders_failure_never_a_score():
    send, calls = _sent(Try(None), Try(None), Try(None), Try(graded(2.0)))
    row = run_apart(graded_within_attempts(send, "ana", attempts=3, first_wait=0.0))
    assert row.status is Status.GRADER_ERROR and row.cause is GraderCause.WORKER_LOST
    assert row.record is None and row.attempts == 3 and len(calls) == 3


def test_a_task_the_cluster_already_started_past_the_attempts_is_not_sent_again():
    send, calls = _sent(Try(None, starts=4), Try(graded(2.0)))
    row = run_apart(graded_within_attempts(send, "ana", attempts=3, first_wait=0.0))
    assert row.status is Status.GRADER_ERROR and row.attempts == 4 and len(calls) == 1
