"""`gradekit check` applies the wire's rules: what sealed grading refuses, the in-process check refuses the same way.

Each test cell below runs twice: in process (`run_checks`, the engine of
`gradekit check` and `gradekit mutants`) and sealed (`SealedNotebook`, the
engine of `prove` and `grade`, its kernel answering through `respond` in
this process). Both must give the cell the same verdict and the same words.
"""

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gradekit.authoring.checks_in_process import load_support_modules, run_checks
from gradekit.core.notebook_script import Role, parse_script
from gradekit.grading.sealed_checks import SealedNotebook
from gradekit.sandbox import crossing
from gradekit.sandbox.answer_server import respond
from gradekit.sandbox.crossing import Mirror

pytestmark = pytest.mark.unit

SCRIPT = """# %% setup
import collections

import torch

from autograd_checks import call_answer, expect

# %% answer answer_f
def sparse_identity():
    return torch.eye(2).to_sparse()


def doubled(t):
    return t * 2


def labelled(t):
    return collections.namedtuple("Labelled", "value label")(t * 2, "twice")

# %% test test_refused_result points=1
call_answer(sparse_identity)

# %% test test_graph_of_the_test points=1
leaf = torch.ones(2, requires_grad=True)
call_answer(doubled, leaf * 3)

# %% test test_a_value_that_crosses points=1
result = call_answer(doubled, torch.ones(2))
expect(result.tolist() == [2.0, 2.0], "doubled is wrong")

# %% test test_a_namedtuple_arrives_as_a_tuple points=1
result = call_answer(labelled, torch.ones(1))
expect(type(result) is tuple and result[1] == "twice", f"a {type(result).__name__} arrived")
"""
ANSWER_CELL = "answer_f"


@pytest.fixture(scope="module", autouse=True)
def support_modules(course):
    load_support_modules(course.source_dir)


def _in_process(script):
    answer = next(cell.body for cell in script if cell.grade_id == ANSWER_CELL)
    return {o.cell: (o.passed, o.failure) for o in run_checks(script, {ANSWER_CELL: answer})}


def _sealed(script, course):
    """Each test cell's verdict and error text from the sealed engine, over a kernel namespace in this process."""
    source = new_notebook()
    for cell in script:
        meta = {"grade_id": cell.grade_id, "schema_version": 3, "grade": False, "locked": True, "solution": False}
        if cell.role is Role.ANSWER:
            meta.update(locked=False, solution=True)
        elif cell.role is Role.TEST:
            meta.update(grade=True, points=cell.points)
        source.cells.append(new_code_cell(cell.body, metadata={"nbgrader": meta}))
    kernel_namespace: dict = {"__name__": "__main__"}
    kernel = Mirror("kernel", resolve_answer=kernel_namespace.__getitem__)
    sealed = SealedNotebook(
        source,
        {"autograd_checks": course.source_dir / "autograd_checks.py"},
        lambda request: respond(kernel, request, vars(crossing)),
    )
    verdicts = {}
    for cell in source.cells:
        role = sealed.role(cell)
        if role == "test":
            errors = [output for output in sealed.run_test(cell) if output.output_type == "error"]
            verdicts[cell.metadata.nbgrader.grade_id] = (not errors, "\n".join(e.evalue for e in errors))
            continue
        exec(cell.source, kernel_namespace)  # the kernel runs setup and answer cells
        if role == "readonly":
            assert sealed.run_readonly(cell) is None
    return verdicts


def test_check_and_the_sealed_engine_agree_on_what_cannot_cross(course):
    script = parse_script(SCRIPT)
    in_process, sealed = _in_process(script), _sealed(script, course)
    assert {cell: verdict[0] for cell, verdict in in_process.items()} == {
        cell: verdict[0] for cell, verdict in sealed.items()
    }
    assert sealed == {
        "test_refused_result": (False, sealed["test_refused_result"][1]),
        "test_graph_of_the_test": (False, sealed["test_graph_of_the_test"][1]),
        "test_a_value_that_crosses": (True, ""),
        "test_a_namedtuple_arrives_as_a_tuple": (True, ""),
    }
    refusal = sealed["test_refused_result"][1]
    assert "sparse_identity raised ValueCannotCross: the result is a tensor of layout torch.sparse_coo" in refusal
    assert "graph built by the test cannot reach the student's kernel" in sealed["test_graph_of_the_test"][1]
    for cell in ("test_refused_result", "test_graph_of_the_test"):  # the same words, in process
        assert sealed[cell][1] in in_process[cell][1]
