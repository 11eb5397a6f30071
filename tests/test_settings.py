"""The kit's settings: typed traits with help, read from nbgrader_config.py once per course."""

from pathlib import Path

import pytest
from traitlets import TraitError
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from gradekit.core.course import CONFIG_FILE, load_course
from gradekit.core.settings import CourseKit

pytestmark = pytest.mark.unit


def kit_config(**values) -> Config:
    config = Config()
    for name, value in values.items():
        setattr(config.CourseKit, name, value)
    return config


def test_each_setting_is_typed_configurable_and_explained():
    traits = CourseKit.class_traits(config=True)
    assert set(traits) == {
        "assignment_id",
        "kernel_memory_gb",
        "grader_attempts",
        "retry_backoff_seconds",
        "idle_seconds",
        "allow_unconfined",
        "due_dates",
    }
    for name, trait in traits.items():
        assert len(trait.help) > 30, f"CourseKit.{name} needs help text"
    assert type(traits["assignment_id"]).__name__ == "Unicode"
    assert type(traits["kernel_memory_gb"]).__name__ == "Float"
    assert type(traits["allow_unconfined"]).__name__ == "Bool"


def test_defaults_hold_without_a_course_kit_section():
    kit = CourseKit(config=Config())
    assert (kit.assignment_id, kit.kernel_memory_gb) == ("autograd", 8.0)


def test_the_course_configuration_sets_them_as_typed_values():
    course = load_course()
    assert course.assignment_id == "autograd"
    assert course.kernel_memory_gb == 8.0 and isinstance(course.kernel_memory_gb, float)


@pytest.mark.parametrize(
    "values, message",
    [
        ({"kernel_memory_gb": 0}, "kernel_memory_gb must be more than 0 GiB"),
        ({"kernel_memory_gb": -2.5}, "kernel_memory_gb must be more than 0 GiB"),
        ({"kernel_memory_gb": "lots"}, "kernel_memory_gb"),
        ({"idle_seconds": 0}, "idle_seconds must be more than 0 s"),
        ({"assignment_id": "../escape"}, "assignment_id must be a plain folder name"),
        ({"assignment_id": ""}, "assignment_id must be a plain folder name"),
        ({"due_dates": {"autograd": "2026-12-18T23:00:00"}}, r"due_dates\['autograd'\] needs a time zone"),
        ({"due_dates": {"autograd": "Friday"}}, r"due_dates\['autograd'\] is not an ISO 8601 date"),
    ],
)
def test_a_bad_value_is_refused_with_a_message_naming_the_setting(values, message):
    with pytest.raises(TraitError, match=message):
        CourseKit(config=kit_config(**values))


def test_a_bad_value_in_the_configuration_file_stops_load_course(tmp_path):
    config = tmp_path / "nbgrader_config.py"
    lines = ["c = get_config()", f"load_subconfig({CONFIG_FILE.name!r}, {str(CONFIG_FILE.parent)!r})"]
    config.write_text("\n".join([*lines, "c.CourseKit.kernel_memory_gb = 0"]))
    with pytest.raises(TraitError, match="more than 0 GiB"):
        load_course(config)


def test_load_course_reads_the_configuration_file_exactly_once(monkeypatch):
    reads = []
    real_load = PyFileConfigLoader.load_config

    def counted(loader):
        reads.append(str(Path(loader.path) / loader.filename))
        return real_load(loader)

    monkeypatch.setattr(PyFileConfigLoader, "load_config", counted)
    course = load_course()
    assert reads == [str(CONFIG_FILE)]
    assert course.nbgrader_config.Execute.timeout == course.cell_timeout


def test_the_due_date_is_read_once_zoned_and_given_to_the_pre_check(tmp_path):
    import datetime

    config = tmp_path / "nbgrader_config.py"
    lines = ["c = get_config()", f"load_subconfig({CONFIG_FILE.name!r}, {str(CONFIG_FILE.parent)!r})"]
    config.write_text("\n".join([*lines, 'c.CourseKit.due_dates = {"autograd": "2026-12-19T00:00:00+01:00"}']))
    course = load_course(config)
    due = datetime.datetime(2026, 12, 18, 23, 0, tzinfo=datetime.timezone.utc)
    assert course.due_date == due and course.precheck.due_date("autograd") == due


def test_the_pre_checks_old_due_dates_setting_is_refused_with_the_new_name(tmp_path):
    config = tmp_path / "nbgrader_config.py"
    lines = ["c = get_config()", f"load_subconfig({CONFIG_FILE.name!r}, {str(CONFIG_FILE.parent)!r})"]
    config.write_text("\n".join([*lines, 'c.Precheck.due_dates = {"autograd": "2026-12-18T23:00:00+00:00"}']))
    with pytest.raises(ValueError, match="c.Precheck.due_dates is now c.CourseKit.due_dates"):
        load_course(config)
