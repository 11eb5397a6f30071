"""The guard's seccomp filter as a program: labels become jumps that land inside it, and the guard finds it by path.

What the filter refuses in a running process is tried in tests/test_kernel_guard.py.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradekit.sandbox import kernel_guard
from gradekit.sandbox.seccomp_filter import SECCOMP_ARCHES, _assemble, forbid_new_programs, seccomp_steps

SANDBOX = Path(__file__).resolve().parent.parent / "gradekit" / "sandbox"
RETURN, EQUAL = 0x06, 0x15
ERRNO_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO with EPERM


@pytest.mark.unit
def test_labels_become_jumps_counted_from_the_next_step():
    steps = [(1, "", "end", 10), (2, "middle", "", 20), ("middle",), (3, "", "", 30), ("end",), (RETURN, "", "", 0)]
    assert _assemble(steps) == [(1, 0, 2, 10), (2, 0, 0, 20), (3, 0, 0, 30), (RETURN, 0, 0, 0)]


@pytest.mark.unit
@pytest.mark.parametrize("machine", sorted(SECCOMP_ARCHES))
def test_every_jump_lands_inside_the_program_and_each_refused_call_on_eperm(machine):
    arch, _, refused, socket_call, clone, clone3, forks = SECCOMP_ARCHES[machine]
    numbers = (*refused.values(), *forks)
    program = seccomp_steps(arch, numbers, socket_call, (clone, clone3))
    for index, (code, true, false, _) in enumerate(program):
        if code != RETURN:
            assert index + 1 + max(true, false) < len(program), f"step {index} jumps past the end"
    assert program[-1][0] == RETURN
    # After the arch, the call number's load and the x32 test: one comparison per refused call.
    for index, number in enumerate(numbers, start=4):
        code, true, _, constant = program[index]
        assert (code, constant) == (EQUAL, number)
        assert program[index + 1 + true] == (RETURN, 0, 0, ERRNO_EPERM)


@pytest.mark.unit
def test_the_guard_hands_out_this_module_s_filter():
    assert kernel_guard.SECCOMP_ARCHES == SECCOMP_ARCHES
    assert kernel_guard.forbid_new_programs.__code__.co_filename == forbid_new_programs.__code__.co_filename


@pytest.mark.nbgrader  # starts an interpreter of its own, so not the unit tier
def test_the_guard_loads_it_by_path_where_nothing_of_gradekit_is_importable(tmp_path):
    """As a kernel does: the guard run by path, in an isolated interpreter started outside the repository."""
    program = textwrap.dedent(f"""
        import runpy, sys
        guard = runpy.run_path({str(SANDBOX / "kernel_guard.py")!r})
        print(guard["forbid_new_programs"].__code__.co_filename)
        print(sorted(name for name in sys.modules if name.split(".")[0] in ("gradekit", "torch", "numpy")))
    """)
    result = subprocess.run(
        [sys.executable, "-I", "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(SANDBOX / "seccomp_filter.py"), "[]"]
