"""The exchange the TA's next step needs is made where it is missing, with the hub's modes, and kept where it exists."""

import os
import stat

import pytest

from gradekit.grading.exchange import COURSE_MODES, ROOT_MODE, ensure_exchange

pytestmark = pytest.mark.unit


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_missing_exchange_is_made_with_the_hub_modes(tmp_path):
    root = tmp_path / "exchange"
    made = ensure_exchange(root, "autograd-course")
    assert made[0] == root and mode(root) == ROOT_MODE
    for name, expected in COURSE_MODES.items():
        assert mode(root / "autograd-course" / name) == expected, name
    assert ensure_exchange(root, "autograd-course") == []  # a second run makes nothing


def test_an_existing_folder_keeps_the_mode_its_administrator_chose(tmp_path):
    root = tmp_path / "exchange"
    (root / "autograd-course" / "inbound").mkdir(parents=True)
    os.chmod(root, 0o777)
    os.chmod(root / "autograd-course" / "inbound", 0o700)
    made = ensure_exchange(root, "autograd-course")
    assert root not in made and mode(root) == 0o777
    assert mode(root / "autograd-course" / "inbound") == 0o700
    assert root / "autograd-course" / "feedback" in made
