import pytest

from gradekit.core.course import CONFIG_FILE, REPO_ROOT, load_course

pytestmark = pytest.mark.unit


def test_course_settings_come_from_nbgrader_config():
    course = load_course()
    assert course.root == REPO_ROOT
    assert course.course_id == "autograd-course"
    assert course.assignment_id == "autograd"
    assert course.cell_timeout == 60
    assert course.code_stub == "# YOUR CODE HERE\nraise NotImplementedError()"
    assert course.kernel_memory_gb == 8
    assert course.db_url == f"sqlite:///{REPO_ROOT / 'gradebook.db'}"
    assert course.exchange_root == REPO_ROOT / "exchange"
    assert course.source_dir == REPO_ROOT / "source" / "autograd"


def test_exchange_and_gradebook_follow_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("KIT_EXCHANGE_ROOT", str(tmp_path / "shared-exchange"))
    monkeypatch.setenv("KIT_GRADEBOOK_URL", "postgresql://grader@127.0.0.1/course")
    course = load_course(CONFIG_FILE)
    assert course.exchange_root == tmp_path / "shared-exchange"
    assert course.db_url == "postgresql://grader@127.0.0.1/course"


def test_a_course_moved_elsewhere_gets_its_own_gradebook(tmp_path):
    moved = load_course().at(tmp_path)
    assert moved.root == tmp_path.resolve()
    assert moved.db_url == f"sqlite:///{tmp_path.resolve() / 'gradebook.db'}"
    assert moved.release_dir == tmp_path.resolve() / "release" / "autograd"


def test_config_declares_the_harmless_stderr_pattern_anchored():
    import re

    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
    pattern = re.compile(config.IgnorePattern.pattern)
    assert config.IgnorePattern.enabled
    assert pattern.search("Matplotlib is building the font cache; this may take a moment.\n")
    # A real warning next to harmless noise must survive: the whole output has to match.
    assert not pattern.search(
        "Matplotlib is building the font cache; this may take a moment.\nUserWarning: non-leaf .grad\n"
    )
    assert not pattern.search("UserWarning: The .grad attribute of a Tensor that is not a leaf")
    assert config.Execute.kernel_name == "python3"
    assert "NotImplementedError" in config.ClearSolutions.code_stub["python"]
