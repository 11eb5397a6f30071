"""The warm kernels' parent is started without the grader's secrets (how its kernels look: test_kernel_zygote.py)."""

import os

import pytest

from gradekit.grading.warm_kernels import Zygote, without_secrets
from gradekit.sandbox.kernel_guard import PROTECTED_VARIABLE

pytestmark = pytest.mark.notebook


def test_the_kernels_parent_never_holds_the_graders_secrets(monkeypatch, tmp_path):
    """Kernels are forked from the zygote and can read its environment block: it must hold no password, no course path."""
    monkeypatch.setenv("KIT_GRADEBOOK_URL", "postgresql://grader:sw0rdfish@127.0.0.1/gradebook")
    monkeypatch.setenv("KIT_EXCHANGE_ROOT", "/srv/exchange")
    monkeypatch.setenv(PROTECTED_VARIABLE, "/srv/course-with-hidden-tests")
    parent = Zygote(without_secrets(os.environ), tmp_path / "kernels")
    try:
        block = open(f"/proc/{parent.host_pid}/environ", "rb").read()
    finally:
        parent.close()
    assert b"sw0rdfish" not in block and b"KIT_EXCHANGE_ROOT" not in block
    assert b"hidden-tests" not in block
    assert b"PATH=" in block
