"""A real boxed kernel answers through the real wire with a value made under torch.inference_mode()."""

import shutil

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gradekit.core.course import REPO_ROOT
from gradekit.grading.safe_execute import SafeExecute
from gradekit.sandbox.kernel_guard import PROTECTED_VARIABLE

pytestmark = pytest.mark.notebook

CHECKS = REPO_ROOT / "source" / "autograd" / "autograd_checks.py"
NOTEBOOK = "wire_inference"

SETUP = "import torch\nfrom autograd_checks import call_answer"
ANSWER = """\
def scaled_without_a_graph(values):
    with torch.inference_mode():  # the lesson names it beside no_grad: nothing is recorded
        return torch.tensor(values, dtype=torch.float64).reshape(2, 2).t() * 2
"""
TEST = """\
result = call_answer(scaled_without_a_graph, [1.0, 2.0, 3.0, 4.0])
print(type(scaled_without_a_graph).__name__, type(result).__name__, result.dtype, result.tolist(), result.stride())
"""


def _cell(source, grade_id, **nbgrader):
    cell = new_code_cell(source)
    plain = {"grade_id": grade_id, "schema_version": 3, "grade": False, "locked": False, "solution": False}
    cell.metadata["nbgrader"] = {**plain, **nbgrader}
    return cell


def test_an_inference_tensor_from_a_boxed_kernel_reaches_the_sealed_test(tmp_path, monkeypatch):
    folder = tmp_path / "submission"
    folder.mkdir()
    shutil.copy(CHECKS, folder / "autograd_checks.py")
    source = new_notebook(
        cells=[
            _cell(SETUP, "setup", locked=True),
            _cell(ANSWER, "answer_scaled", solution=True),
            _cell(TEST, "test_scaled", grade=True, locked=True, points=1),
        ]
    )
    source.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    protected = tmp_path / "course"  # a guarded kernel is what makes the grading sealed
    protected.mkdir()
    monkeypatch.setenv(PROTECTED_VARIABLE, str(protected))
    submitted = nbformat.from_dict(source)
    resources = {"metadata": {"path": str(folder)}, "unique_key": NOTEBOOK}
    graded, _ = SafeExecute(
        timeout=60, sealed_sources={NOTEBOOK: source}, sealed_helpers={"autograd_checks": folder / "autograd_checks.py"}
    ).preprocess(submitted, resources)
    outputs = graded.cells[2].outputs
    assert [output.get("output_type") for output in outputs] == ["stream"], outputs
    # The test ran on the grader's side (the answer is a RemoteAnswer there) and got the kernel's value back.
    assert outputs[0]["text"] == "RemoteAnswer Tensor torch.float64 [[2.0, 6.0], [4.0, 8.0]] (1, 2)\n"
