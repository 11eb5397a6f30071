"""journeys.student_account: each simulated student has a home, a configuration naming them and a cache."""

import pytest
from traitlets.config.loader import PyFileConfigLoader

from journeys.student_account import create_student_account, student_environment

pytestmark = pytest.mark.unit


def test_configuration_names_the_student_course_exchange_and_cache(tmp_path):
    account = create_student_account(tmp_path / "home", "ada", "autograd-course", tmp_path / "exchange")
    config = PyFileConfigLoader(account.config_file.name, path=str(account.home)).load_config()
    assert config.CourseDirectory.student_id == "ada"
    assert config.CourseDirectory.course_id == "autograd-course"
    assert config.Exchange.root == str((tmp_path / "exchange").resolve())
    assert config.Exchange.cache == str(account.cache)
    assert account.cache.parent == account.home


def test_validates_kernels_are_encrypted_so_ipykernel_does_not_warn(tmp_path):
    account = create_student_account(tmp_path / "home", "ada", "autograd-course", tmp_path / "exchange")
    config = PyFileConfigLoader(account.config_file.name, path=str(account.home)).load_config()
    assert config.KernelManager.transport_encryption == "auto"


def test_environment_is_the_students_own(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_EXCHANGE_ROOT", "/somewhere/else")
    monkeypatch.setenv("PYTHONPATH", "/srv/course")
    account = create_student_account(tmp_path / "home", "bob", "autograd-course", tmp_path / "exchange")
    env = student_environment(account)
    assert env["HOME"] == str(account.home) and env["USER"] == env["LOGNAME"] == "bob"
    assert env["JUPYTER_DATA_DIR"].startswith(str(account.home))
    assert "KIT_EXCHANGE_ROOT" not in env and "PYTHONPATH" not in env


def test_two_students_cannot_share_a_home(tmp_path):
    create_student_account(tmp_path / "home", "cy", "autograd-course", tmp_path / "exchange")
    with pytest.raises(FileExistsError):
        create_student_account(tmp_path / "home", "cy", "autograd-course", tmp_path / "exchange")
