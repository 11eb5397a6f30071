"""A grading run: built once by the coordinator from the course's traits, read back by every worker."""

import copy
import dataclasses
import json

import pytest
from traitlets import TraitError

from gradekit.core.course import Course, kit_settings, load_course
from gradekit.core.settings import CourseKit
from gradekit.grading.grading_run import DEFAULT_CELL_SECONDS, RUN_FILE, GradingRun

pytestmark = pytest.mark.unit


def test_workers_take_the_kit_settings_the_coordinator_wrote(tmp_path):
    coordinator = dataclasses.replace(load_course(), kernel_memory_gb=2.5, assignment_id="week1")
    GradingRun.of(coordinator, cell_timeout=30).write(tmp_path)
    run = GradingRun.read(tmp_path, load_course())
    worker = run.applied_to(load_course())
    assert (worker.kernel_memory_gb, worker.assignment_id) == (2.5, "week1")
    assert (worker.grader_attempts, worker.retry_backoff_seconds) == (3, 0.5)
    assert (run.attempts, run.first_wait) == (3, 0.5)
    assert run.cell_timeout == 30
    assert str(coordinator.exchange_root.resolve()) in run.protected_roots
    assert str(coordinator.root.resolve()) in run.protected_roots


def test_every_course_kit_trait_travels_and_is_a_field_of_the_course():
    traits = set(CourseKit.class_own_traits(config=True))
    assert set(kit_settings(CourseKit())) == traits
    assert traits <= {field.name for field in dataclasses.fields(Course)}


def test_the_run_file_holds_every_setting_by_its_trait_name(tmp_path):
    course = dataclasses.replace(load_course(), grader_attempts=5, allow_unconfined=True)
    GradingRun.of(course).write(tmp_path)
    written = json.loads((tmp_path / RUN_FILE).read_text())
    assert written["kit"] == {
        "allow_unconfined": True,
        "assignment_id": "autograd",
        "due_dates": course.due_dates,
        "grader_attempts": 5,
        "idle_seconds": 10.0,
        "kernel_memory_gb": 8.0,
        "retry_backoff_seconds": 0.5,
    }
    assert written["cell_timeout"] == course.cell_timeout


def test_a_bad_setting_in_the_run_file_is_refused_by_its_trait(tmp_path):
    GradingRun.of(load_course()).write(tmp_path)
    written = json.loads((tmp_path / RUN_FILE).read_text())
    written["kit"]["grader_attempts"] = 0
    (tmp_path / RUN_FILE).write_text(json.dumps(written))
    with pytest.raises(TraitError, match="grader_attempts must be at least 1, got 0"):
        GradingRun.read(tmp_path)


def test_a_template_no_run_wrote_is_graded_by_the_course_or_the_defaults(tmp_path):
    course = dataclasses.replace(load_course(), grader_attempts=4, cell_timeout=12)
    assert (GradingRun.read(tmp_path, course).attempts, GradingRun.read(tmp_path, course).cell_timeout) == (4, 12)
    fallback = GradingRun.read(tmp_path)
    assert (fallback.attempts, fallback.cell_timeout, fallback.protected_roots) == (3, DEFAULT_CELL_SECONDS, ())


def test_workers_take_the_late_policy_the_coordinator_wrote(tmp_path):
    stated = copy.deepcopy(load_course().nbgrader_config)
    stated.LatePolicy.cap = 0.25
    GradingRun.of(dataclasses.replace(load_course(), nbgrader_config=stated)).write(tmp_path)
    worker = GradingRun.read(tmp_path).applied_to(load_course())
    assert worker.nbgrader_config.LatePolicy.cap == 0.25
    assert worker.nbgrader_config.LatePolicy.share_per_period == 0.1


def test_a_bad_late_policy_in_the_run_file_is_refused_by_its_trait(tmp_path):
    GradingRun.of(load_course()).write(tmp_path)
    written = json.loads((tmp_path / RUN_FILE).read_text())
    written["late_policy"]["per"] = "fortnight"
    (tmp_path / RUN_FILE).write_text(json.dumps(written))
    with pytest.raises(TraitError, match="per"):
        GradingRun.read(tmp_path)
