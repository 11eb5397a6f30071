import pickle

import pytest

from gradekit.core.failures import GraderCause, GraderFailure

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("cause", list(GraderCause), ids=lambda cause: cause.name)
def test_a_grader_failure_crosses_a_process_boundary_whole(cause):
    failure = pickle.loads(pickle.dumps(GraderFailure(cause, "kernel 4242")))
    assert failure.cause is cause and failure.detail == "kernel 4242"
    assert str(failure) == f"{cause.value}: kernel 4242"


def test_a_failure_without_detail_reads_as_its_cause():
    assert str(GraderFailure(GraderCause.WORKER_LOST)) == "the grading worker was lost"
