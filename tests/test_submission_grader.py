"""One submission's outcome and the scratch grader's plain helpers."""

import pytest

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.core.status import Status
from gradekit.grading.submission_grader import GradedSubmission, grader_error


@pytest.mark.unit
def test_an_outcome_built_by_position_is_refused():
    with pytest.raises(TypeError, match="positional"):
        GradedSubmission("ada", Status.GRADED, "", None, (), 1.0)  # type: ignore[misc]


@pytest.mark.unit
def test_a_grader_error_scores_nothing_and_says_how_often_it_was_tried():
    failure = GraderFailure(GraderCause.KERNEL_START, "no kernel")
    row = grader_error("ada", failure, attempts=3, seconds=2.0, worker="vm:1")
    assert (row.status, row.record, row.files, row.cause, row.attempts) == (
        Status.GRADER_ERROR,
        None,
        (),
        GraderCause.KERNEL_START,
        3,
    )
    assert row.message == f"{failure} (tried 3 times)"
    assert row.ok is False


@pytest.mark.nbgrader
def test_the_phases_of_a_graded_submission_are_all_there_and_add_up_to_its_wall_time(course, manifest, tmp_path):
    from cohort_fixtures import cohort_course

    from gradekit.grading import kept_parents
    from gradekit.grading.cohort import build_template
    from gradekit.grading.executors import LocalExecutor
    from gradekit.grading.grading_run import GradingRun
    from gradekit.grading.phase_clock import Phase

    notebook = "010_history"
    scratch = cohort_course(course, manifest.only([notebook]), tmp_path / "course", controls=0)
    template = build_template(scratch, tmp_path / "template", (notebook,))
    GradingRun.of(scratch).write(template.root)
    folder = scratch.submitted_dir / "reference" / scratch.assignment_id
    # In a pool worker of the local executor, which removes what its workers leave (they end without
    # running exit handlers): a bare pool left a scratch course and a kernels folder in /tmp.
    kept_parents.end_kept()  # the run starts its warm parent: none an earlier test's run kept is lent to it
    (graded,) = LocalExecutor(1).grade_all(template.root, [(folder, "reference")])
    assert graded.status is Status.GRADED
    engine = set(Phase) - {Phase.FEEDBACK}  # feedback is the cohort's, made after grading
    assert set(graded.phases) == engine
    assert all(graded.phases.of(phase) >= 0 for phase in engine)
    assert all(graded.phases.of(phase) > 0 for phase in engine - {Phase.OTHER})
    within_the_submission = graded.phases.total - graded.phases.of(Phase.WORKER_START)
    assert within_the_submission == pytest.approx(graded.seconds, rel=0.02, abs=0.05)
    # The next run is lent the warm parent this one kept: no time goes to its start.
    (again,) = LocalExecutor(1).grade_all(template.root, [(folder, "reference")])
    assert again.status is Status.GRADED and again.phases.of(Phase.BOX_START) == 0
    assert again.phases.total - again.phases.of(Phase.WORKER_START) == pytest.approx(again.seconds, rel=0.02, abs=0.05)


@pytest.mark.unit
def test_the_engines_nbgrader_checks_a_notebooks_schema_once_its_steps_have_run(course):
    from gradekit.grading.submission_grader import nbgrader_api

    assert nbgrader_api(course, warm_kernels=True).config.Exporter.optimistic_validation is True
