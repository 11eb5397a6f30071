"""The grading side of a sealed notebook: which cells run where, and what a test cell run here shows."""

import os

import pytest
from nbformat.v4 import new_notebook

from gradekit.authoring import cells
from gradekit.grading.sealed_checks import OUTPUT_LIMIT, KernelStopped, RemoteAnswer, SealedNotebook

pytestmark = pytest.mark.unit


def never_called(request: bytes) -> bytes:
    raise AssertionError("no call should reach the kernel here")


def sealed_of(*notebook_cells, helpers=None) -> SealedNotebook:
    return SealedNotebook(new_notebook(cells=list(notebook_cells)), helpers or {}, never_called)


def test_a_demo_runs_in_the_kernel_alone():
    setup, demo = cells.setup_cell("setup", "import math"), cells.demo_cell("demo_pi", "print(math.pi)")
    sealed = sealed_of(setup, demo)
    assert (sealed.role(setup), sealed.role(demo)) == ("readonly", "kernel")


def test_tests_run_here_answers_and_added_cells_in_the_kernel():
    answer = cells.answer_cell("answer_f", "def f(x):\n    return x")
    test = cells.test_cell("test_f", 1, "assert True")
    added = cells.setup_cell("student_added", "x = 1")
    sealed = sealed_of(answer, test)
    assert (sealed.role(answer), sealed.role(test), sealed.role(added)) == ("kernel", "test", "kernel")


def test_an_answer_name_is_a_stand_in_that_calls_the_kernel():
    sealed = sealed_of(cells.answer_cell("answer_f", "def f(x):\n    return x\nSCALE = 2"))
    assert isinstance(sealed.namespace["f"], RemoteAnswer) and isinstance(sealed.namespace["SCALE"], RemoteAnswer)
    assert repr(sealed.namespace["f"]) == "<the student's f>"


def test_a_passing_test_shows_what_it_printed_and_a_failing_one_its_own_rendering():
    passing = cells.test_cell("test_ok", 1, "print('checked')")
    failing = cells.test_cell(
        "test_bad",
        1,
        "class Verdict(AssertionError):\n"
        "    def _render_traceback_(self):\n"
        "        return ['the diagnosis, and what to do']\n"
        "raise Verdict('wrong')",
    )
    sealed = sealed_of(passing, failing)
    assert [(o.output_type, o.text) for o in sealed.run_test(passing)] == [("stream", "checked\n")]
    (error,) = sealed.run_test(failing)
    assert (error.ename, error.evalue, error.traceback) == ("Verdict", "wrong", ["the diagnosis, and what to do"])


def test_a_test_cell_prints_at_most_the_output_limit():
    chatty = cells.test_cell("test_chatty", 1, f"print('x' * {OUTPUT_LIMIT * 2})")
    (printed,) = sealed_of(chatty).run_test(chatty)
    assert len(printed.text) == OUTPUT_LIMIT


def test_a_stopped_kernel_ends_the_notebook_whatever_the_test_catches():
    stopper = cells.test_cell("test_stop", 1, "raise KernelStopped('gone')")
    sealed = sealed_of(stopper)
    sealed.namespace["KernelStopped"] = KernelStopped
    with pytest.raises(KernelStopped):
        sealed.run_test(stopper)


def test_a_course_module_is_imported_from_its_file_beside_the_notebooks(tmp_path):
    helper = tmp_path / "course_helpers.py"
    helper.write_text("ANSWER = 42\n")
    test = cells.test_cell("test_helper", 1, "import course_helpers\nprint(course_helpers.ANSWER)")
    sealed = sealed_of(test, helpers={"course_helpers": helper})
    assert [o.text for o in sealed.run_test(test)] == ["42\n"]


def test_each_notebook_gets_a_fresh_course_module_and_an_edited_file_is_read_again(tmp_path):
    helper = tmp_path / "course_helpers.py"
    helper.write_text("ANSWER = 42\nSEEN = []\n")
    shown = (
        "import course_helpers\ncourse_helpers.SEEN.append(1)\nprint(course_helpers.ANSWER, len(course_helpers.SEEN))"
    )
    test = cells.test_cell("test_helper", 1, shown)
    first, second = (sealed_of(test, helpers={"course_helpers": helper}) for _ in range(2))
    assert [o.text for o in first.run_test(test)] == ["42 1\n"]
    assert [o.text for o in second.run_test(test)] == ["42 1\n"]  # nothing one notebook did reaches the next
    stamp = helper.stat()
    helper.write_text("ANSWER = 43\nSEEN = []\n")  # the same size, and the same change time as before
    os.utime(helper, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert [o.text for o in sealed_of(test, helpers={"course_helpers": helper}).run_test(test)] == ["43 1\n"]


def test_a_course_module_is_compiled_as_an_import_would_compile_it(tmp_path):
    helper = tmp_path / "course_helpers.py"
    helper.write_text("def f(x: int) -> int:\n    return x\nHINTS = f.__annotations__\n")
    test = cells.test_cell("test_helper", 1, "import course_helpers\nprint(course_helpers.HINTS['x'] is int)")
    assert [o.text for o in sealed_of(test, helpers={"course_helpers": helper}).run_test(test)] == ["True\n"]


def test_a_read_only_cell_runs_here_too_and_says_why_it_failed():
    fine, broken = cells.setup_cell("setup_ok", "y = 2"), cells.setup_cell("setup_broken", "1 / 0")
    sealed = sealed_of(fine, broken)
    assert sealed.run_readonly(fine) is None and sealed.namespace["y"] == 2
    assert sealed.run_readonly(broken) == "ZeroDivisionError: division by zero"
