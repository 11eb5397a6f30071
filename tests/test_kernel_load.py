"""Students' kernels at a stated activity: real kernels run a notebook's cells, and the command prints what they used;
its figures (cores, students per core and per GiB, percentiles) from given readings; a class that cannot fit is refused."""

import asyncio
import math
import os

import pytest

from gradekit.commands.cli import main
from gradekit.commands.figures import kernel_load_figure
from gradekit.commands.kernel_load import (
    KERNEL_BYTES_AT_MOST,
    ClassLoad,
    KernelLoadResult,
    KernelPlan,
    SimulatedStudent,
    code_cells,
    kernel_load_lines,
    refuse_what_cannot_fit,
    run_class,
)

MIB = 2**20


def class_of(students=4, cpu=2.0, window=10.0, memory=(250 * MIB,) * 4, cells=(0.1, 0.2, 0.3), failed=()):
    return ClassLoad(
        students=students,
        start_seconds=(1.0, 2.0, 3.0, 4.0)[:students],
        cell_seconds=cells,
        failed_cells=failed,
        kernel_cpu_seconds=cpu,
        machine_busy_seconds=cpu + 1.0,
        window_seconds=window,
        kernel_bytes=memory,
    )


@pytest.mark.unit
def test_a_classes_figures_come_from_its_readings():
    load = class_of()
    assert load.kernel_cores == pytest.approx(0.2) and load.machine_cores == pytest.approx(0.3)
    assert load.students_per_core == pytest.approx(20.0)
    assert load.mean_kernel_bytes == 250 * MIB and load.students_per_gib == pytest.approx(4.096)
    assert load.cell_p50 == pytest.approx(0.2) and load.start_p95 == pytest.approx(3.85)
    assert math.isinf(class_of(cpu=0.0).students_per_core)


@pytest.mark.unit
def test_a_run_holds_only_when_every_class_ran_cells_and_none_failed():
    def result(*classes):
        return KernelLoadResult(KernelPlan(), ("010_history",), 2, 8 * 2**30, 0.5, classes)

    assert result(class_of(), class_of()).ok
    assert not result(class_of(), class_of(failed=("010_history cell 3: ZeroDivisionError: division by zero",))).ok
    assert not result(class_of(cells=())).ok


@pytest.mark.unit
def test_the_printed_lines_and_the_figure_state_the_activity_the_machine_and_every_failed_cell():
    failed = ("060_training cell 7: RuntimeError: boom",)
    plan = KernelPlan(classes=(4,), think_seconds=20.0, window_seconds=60.0)
    result = KernelLoadResult(plan, ("010_history", "060_training"), 2, 8 * 2**30, 0.5, (class_of(failed=failed),))
    lines = kernel_load_lines(result)
    assert "a cell every 20 s (pauses drawn between 10 and 30 s), read over 60 s" in lines[0]
    assert "2 notebook(s)" in lines[1] and "2 cores, 8.0 GiB" in lines[1]
    assert lines[-1] == f"failed: {failed[0]}"
    figure = kernel_load_figure(result)
    assert "| 4 | 0.200 | 20 | 250 MiB | 1.0 GiB |" in figure
    assert "a core holds about 20 such students" in figure and "a GiB holds about 4.1" in figure


@pytest.mark.unit
def test_a_class_whose_kernels_would_not_fit_in_memory_is_refused_before_any_starts():
    refuse_what_cannot_fit(10, 10 * KERNEL_BYTES_AT_MOST)  # fits
    refuse_what_cannot_fit(10, 0)  # the machine does not say: nothing to refuse on
    with pytest.raises(ValueError, match="11 kernels may need .* GiB .* ask for a smaller class"):
        refuse_what_cannot_fit(11, 10 * KERNEL_BYTES_AT_MOST)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--students", "100000"], "ask for a smaller class"),
        (["--students", "0"], "class sizes of 1 or more"),
        (["--window", "0"], "a window over 0 s"),
        (["--notebook", "999_nowhere"], "not in the manifest: 999_nowhere"),
    ],
)
def test_what_the_command_cannot_run_is_refused_with_a_reason(argv, said, capsys):
    assert main(["kernel-load", *argv]) == 2
    assert said in capsys.readouterr().err


@pytest.mark.unit
def test_a_student_runs_the_notebooks_code_cells_with_the_reference_answers(course, manifest):
    cells = code_cells(course, manifest, "010_history")
    assert cells and all(cell.strip() for cell in cells)
    assert any("def float64_leaf" in cell for cell in cells)  # an answer cell, filled


@pytest.mark.nbgrader
def test_real_kernels_work_through_their_cells_and_every_cell_that_raised_is_named(tmp_path):
    students = [SimulatedStudent("demo", ("x = 1", "x + 1", "1 / 0")), SimulatedStudent("calm", ("y = 2", "y * 3"))]
    load = asyncio.run(run_class(students, tmp_path, KernelPlan(think_seconds=0.2, window_seconds=3.0)))
    assert load.students == 2 and len(load.start_seconds) == 2
    assert load.failed_cells and all(f == "demo cell 2: ZeroDivisionError: division by zero" for f in load.failed_cells)
    assert len(load.cell_seconds) >= 4  # both worked through the window, a cell at most 0.3 s apart
    assert load.kernel_cpu_seconds > 0 and load.window_seconds >= 3.0
    assert all(memory > 10 * MIB for memory in load.kernel_bytes)  # read while the kernels were still up
    assert all(student.pid and not student.manager.has_kernel for student in students)  # and shut down after


@pytest.mark.nbgrader
def test_the_command_runs_a_class_on_a_notebook_and_prints_its_figures(capsys, tmp_path):
    figure = tmp_path / "kernel-load.md"
    argv = ["kernel-load", "--students", "2", "--think", "0.5", "--window", "5", "--notebook", "010_history"]
    assert main([*argv, "--figures", str(figure)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "a cell every 0.5 s" in printed[0] and "1 notebook(s)" in printed[1]
    row = printed[-1].split()
    assert row[0] == "2" and row[-1] == "0" and int(row[-2]) > 2  # two students, several cells, none failed
    written = figure.read_text()
    assert written.startswith(f"<!-- written by: python -m gradekit {' '.join(argv[:-2])} --notebook 010_history")


@pytest.mark.nbgrader
def test_a_kernel_that_dies_before_it_answers_is_named_with_its_last_words(tmp_path):
    student = SimulatedStudent("010_history", ("1",))
    broken = dict(os.environ, PYTHONHOME=str(tmp_path / "no-python-here"))  # the interpreter cannot start

    async def start_and_stop():
        try:
            await student.start(tmp_path, broken)
        finally:
            await student.stop()

    with pytest.raises(RuntimeError, match=r"(?s)010_history's kernel: .*died.*last words:.*Fatal Python error"):
        asyncio.run(start_and_stop())
