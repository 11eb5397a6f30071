"""Collect copies a submission's symbolic links as links, so that intake can refuse them."""

import os

import pytest
from nbgrader.coursedir import CourseDirectory
from traitlets.config.loader import PyFileConfigLoader

from gradekit.core.course import CONFIG_FILE
from gradekit.grading.link_keeping_collect import LinkKeepingCollect

pytestmark = pytest.mark.unit


def test_links_arrive_as_links_and_files_as_files(tmp_path):
    classmate = tmp_path / "inbound" / "alice+autograd+now"
    classmate.mkdir(parents=True)
    (classmate / "010_history.ipynb").write_text("alice's answers")
    inbound = tmp_path / "inbound" / "mallory+autograd+now"
    inbound.mkdir()
    (inbound / "020_leaves.ipynb").write_text("mallory's answers")
    (inbound / "010_history.ipynb").symlink_to(classmate / "010_history.ipynb")
    (inbound / "everything").symlink_to("/")  # followed, this would copy the whole machine
    submitted = tmp_path / "submitted" / "mallory" / "autograd"
    LinkKeepingCollect(coursedir=CourseDirectory()).do_copy(str(inbound), str(submitted))
    assert (submitted / "020_leaves.ipynb").read_text() == "mallory's answers"
    assert not (submitted / "020_leaves.ipynb").is_symlink()
    assert os.readlink(submitted / "010_history.ipynb") == str(classmate / "010_history.ipynb")
    assert os.readlink(submitted / "everything") == "/"


def test_the_course_configuration_collects_with_it():
    config = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
    assert config.ExchangeFactory.collect.__name__ == LinkKeepingCollect.__name__
