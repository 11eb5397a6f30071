"""journeys.exchange without running nbgrader: options, the TA's configuration and environment."""

import pytest
from traitlets.config.loader import PyFileConfigLoader

from journeys.exchange import exchange_options, install_course_config, instructor_environment

pytestmark = pytest.mark.unit


def test_every_exchange_step_names_the_course_and_the_exchange(course, tmp_path):
    assert exchange_options(course, tmp_path) == (
        f"--course={course.course_id}",
        f"--Exchange.root={tmp_path.resolve()}",
    )


def test_a_scratch_course_serves_its_own_root_exchange_and_gradebook(course, tmp_path, monkeypatch):
    scratch = course.at(tmp_path / "course")
    scratch.root.mkdir()
    env = instructor_environment(scratch, tmp_path / "exchange")
    for name in ("KIT_EXCHANGE_ROOT", "KIT_GRADEBOOK_URL"):
        monkeypatch.setenv(name, env[name])
    installed = install_course_config(scratch)
    config = PyFileConfigLoader(installed.name, path=str(installed.parent)).load_config()
    assert config.CourseDirectory.root == str(scratch.root)
    assert config.CourseDirectory.db_url == scratch.db_url
    assert config.Exchange.root == str((tmp_path / "exchange").resolve())
