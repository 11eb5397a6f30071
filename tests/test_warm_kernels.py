"""The warm kernels' parent is started without the grader's secrets (how its kernels look: test_kernel_zygote.py)."""

import os

import pytest

from gradekit.grading.warm_kernels import Zygote, discard_zygote, without_secrets, zygote
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


def test_a_forked_process_that_ends_its_zygote_leaves_its_parents_running_with_its_folder():
    """A forked grading process ends with discard_zygote: the parent's own zygote must outlive it."""
    parent = zygote()
    child = os.fork()
    if child == 0:
        try:
            discard_zygote()
            parent.close()  # as the exit handler it inherited would, were it to exit normally
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    try:
        assert zygote() is parent and parent.process.poll() is None and parent.kernels_root.is_dir()
    finally:
        discard_zygote()
