"""The soak's faults: a gradebook held busy, a fault paced by the share of the cohort graded, the kernel to strike."""

import os
import sqlite3
import time

import pytest
from soak_fixtures import wait_for

from gradekit.commands.soak_faults import FaultInjector, FaultKind, FaultPlan, kernel_tmp_folder


@pytest.mark.unit
def test_the_gradebook_is_busy_while_the_injector_holds_it_and_free_after(tmp_path):
    gradebook = tmp_path / "gradebook.db"
    sqlite3.connect(gradebook).execute("CREATE TABLE grade (score REAL)").connection.commit()
    plan = FaultPlan(kinds=(FaultKind.LOCK_GRADEBOOK,), interval_seconds=0, lock_seconds=2)

    def busy() -> bool:
        try:
            with sqlite3.connect(gradebook, timeout=0) as other:
                other.execute("INSERT INTO grade VALUES (1)")
            return False
        except sqlite3.OperationalError as error:
            return "locked" in str(error)

    with FaultInjector(plan, os.getpid(), frozenset(), gradebook, tmp_path) as injector:
        wait_for(busy, seconds=5)
        wait_for(lambda: injector.faults)
    assert not busy()
    assert [fault.kind for fault in injector.faults] == [FaultKind.LOCK_GRADEBOOK]


@pytest.mark.unit
def test_a_fault_waits_for_its_share_of_the_cohort_to_be_graded(tmp_path):
    gradebook = tmp_path / "gradebook.db"
    sqlite3.connect(gradebook).close()
    graded = [0.0]
    plan = FaultPlan(kinds=(FaultKind.LOCK_GRADEBOOK,), interval_seconds=0, lock_seconds=0)
    with FaultInjector(plan, os.getpid(), frozenset(), gradebook, tmp_path, lambda: graded[0]) as injector:
        time.sleep(0.5)
        assert injector.faults == []  # one fault of one: it waits until half the cohort is graded
        graded[0] = 0.5
        wait_for(lambda: injector.faults)
    assert [fault.kind for fault in injector.faults] == [FaultKind.LOCK_GRADEBOOK]


@pytest.mark.unit
def test_the_kernel_folder_to_delete_is_the_one_written_last(tmp_path):
    folders = {
        "old": tmp_path / "gradekit-run-a" / "kit-kernels-b" / "kold",
        "new": tmp_path / "gradekit-run-a" / "kit-kernels-c" / "knew",
        "elsewhere": tmp_path / "kit-kernels-d" / "kother",
        "not-a-kernel": tmp_path / "gradekit-worker-e" / "kx",
    }
    for written, folder in zip((1_000, 2_000, 1_500, 3_000), folders.values()):
        (folder / "mailbox").mkdir(parents=True)
        os.utime(folder / "mailbox", (written, written))
    assert kernel_tmp_folder(tmp_path) == folders["new"]
    assert kernel_tmp_folder(tmp_path / "gradekit-worker-e") is None
