"""Collect copies a submission's symbolic links as links, so that intake can refuse them."""

import datetime
import os

import pytest
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import parse_utc
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


NOBODY = 65534  # an account that is neither the collector nor the student a folder is named for


def _submission(inbound, name: str, claimed: str, owner: int | None = None):
    folder = inbound / name
    folder.mkdir(parents=True)
    (folder / "010_history.ipynb").write_text(f"answers of {name}")
    (folder / "timestamp.txt").write_text(claimed)
    if owner is not None:
        for path in (folder / "010_history.ipynb", folder / "timestamp.txt", folder):
            os.chown(path, owner, owner)
    return {"username": name.split("+")[0], "filename": name, "timestamp": claimed}


def test_a_submission_made_in_a_classmates_name_by_another_account_is_not_collected(tmp_path, caplog):
    collect = LinkKeepingCollect(coursedir=CourseDirectory())
    collect.inbound_path = str(tmp_path)
    own = _submission(tmp_path, "alice+autograd+2026-12-01 10:00:00.000000 UTC", "2026-12-01 10:00:00.000000 UTC")
    planted = _submission(
        tmp_path, "alice+autograd+2026-12-01 11:00:00.000000 UTC", "2026-12-01 11:00:00.000000 UTC", owner=NOBODY
    )
    assert collect._sort_by_timestamp([planted, own])[0] == own  # the newer one is not hers
    collect.src_records = [planted]
    collect.coursedir.assignment_id = "autograd"
    collect.coursedir.course_id = "course"
    collect.coursedir.root = str(tmp_path / "course")
    collect.copy_files()
    assert collect.src_records == []
    assert not (tmp_path / "course" / "submitted" / "alice").exists()


def test_a_late_submission_cannot_claim_an_earlier_time_than_its_folder_was_made(tmp_path):
    made = datetime.datetime.now(datetime.timezone.utc)
    backdated = "2026-01-01 00:00:00.000000 UTC"
    _submission(tmp_path / "inbound", "bob+autograd+2026-01-01 00:00:00.000000 UTC", backdated, owner=NOBODY)
    source = tmp_path / "inbound" / "bob+autograd+2026-01-01 00:00:00.000000 UTC"
    dest = tmp_path / "submitted" / "bob" / "autograd"
    LinkKeepingCollect(coursedir=CourseDirectory()).do_copy(str(source), str(dest))
    taken = parse_utc((dest / "timestamp.txt").read_text()).replace(tzinfo=datetime.timezone.utc)
    assert abs(taken - made) < datetime.timedelta(minutes=1)


def test_the_collectors_own_folders_keep_the_time_they_claim(tmp_path):
    claimed = "2026-01-01 00:00:00.000000 UTC"  # a restored backup's submission, collected again
    _submission(tmp_path / "inbound", "carol+autograd+x", claimed)
    dest = tmp_path / "submitted" / "carol" / "autograd"
    LinkKeepingCollect(coursedir=CourseDirectory()).do_copy(str(tmp_path / "inbound" / "carol+autograd+x"), str(dest))
    assert (dest / "timestamp.txt").read_text() == claimed
