"""The course's nbgrader preprocessors, and how nbgrader_config.py finds them."""

import subprocess
import sys

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from gradekit.core.course import CONFIG_FILE
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.grading.output_limits import LimitOutputSize
from gradekit.grading.preprocessors import DiagnosesOnly, GradeMarkSchemes, is_mark_scheme


def _cell(*outputs, graded=True):
    cell = nbformat.v4.new_code_cell("pass", outputs=list(outputs))
    if graded:
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_x", "points": 1}
    return cell


def _run(preprocessor, cell):
    return preprocessor.preprocess_cell(cell, {}, 0)[0]


@pytest.mark.unit
def test_every_configurable_trait_explains_itself():
    for preprocessor in (LimitOutputSize, DiagnosesOnly, GradeMarkSchemes):
        for name, trait in preprocessor.class_traits(config=True).items():
            assert trait.help, f"{preprocessor.__name__}.{name} has no help"


@pytest.mark.unit
def test_feedback_keeps_diagnoses_and_only_the_last_line_of_other_errors():
    diagnosis = nbformat.v4.new_output(
        "error", ename="Diagnosis", evalue="[misconception: x-y-z]", traceback=["a", "b"]
    )
    other = nbformat.v4.new_output("error", ename="KeyError", evalue="'w'", traceback=["grader code", "KeyError: 'w'"])
    cell = _run(DiagnosesOnly(), _cell(diagnosis, other))
    assert cell.outputs[0].traceback == ["a", "b"]
    assert cell.outputs[1].traceback == ["KeyError: 'w'"]


@pytest.mark.unit
def test_a_failed_cell_says_that_only_what_the_visible_check_names_passed():
    checked = "Checked on the page's example: dtype, leaf. The grader also tests other inputs.\n"
    said = nbformat.v4.new_output("stream", name="stdout", text=checked + "x = 2\n")
    diagnosis = nbformat.v4.new_output("error", ename="Diagnosis", evalue="[misconception: x-y-z] no", traceback=["no"])
    failed = _run(DiagnosesOnly(), _cell(said, diagnosis))
    assert failed.outputs[0].text == (
        "Checked on the page's example: dtype, leaf. The grader also tests other inputs. "
        "Those passed, but the grader's own checks failed:\nx = 2\n"
    )
    passing = nbformat.v4.new_output("stream", name="stdout", text=checked)
    assert _run(DiagnosesOnly(), _cell(passing)).outputs[0].text == checked


@pytest.mark.unit
def test_cells_that_are_not_graded_keep_their_tracebacks():
    error = nbformat.v4.new_output("error", ename="ValueError", evalue="v", traceback=["frame", "ValueError: v"])
    assert _run(DiagnosesOnly(), _cell(error, graded=False)).outputs[0].traceback == ["frame", "ValueError: v"]


@pytest.mark.unit
def test_a_link_to_the_configuration_roots_the_course_beside_it_and_still_finds_the_preprocessors(tmp_path):
    link = tmp_path / CONFIG_FILE.name
    link.symlink_to(CONFIG_FILE)
    config = PyFileConfigLoader(link.name, path=str(tmp_path)).load_config()
    assert config.CourseDirectory.root == str(tmp_path)
    assert LimitOutputSize in config.Autograde.autograde_preprocessors
    assert DiagnosesOnly in config.GenerateFeedback.preprocessors
    assert config.LimitOutputSize.max_characters == 100_000


@pytest.mark.nbgrader
def test_a_process_without_the_kit_on_its_path_still_loads_them(tmp_path):
    """As plain nbgrader does, from a folder that is not the repository."""
    (tmp_path / CONFIG_FILE.name).symlink_to(CONFIG_FILE)
    program = (
        "from traitlets.config.loader import PyFileConfigLoader\n"
        "config = PyFileConfigLoader('nbgrader_config.py', path='.').load_config()\n"
        "print(*[step.__name__ for step in config.GenerateFeedback.preprocessors])\n"
        "import gradekit\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, env=grading_environment(), capture_output=True, text=True
    )
    assert result.stdout.split() == ["ClearHiddenTests", "DiagnosesOnly", "GetGrades", "CSSHTMLHeaderPreprocessor"]
    assert "No module named 'gradekit'" in result.stderr  # so the kit was not importable there


@pytest.mark.unit
def test_a_mark_scheme_is_a_task_cell_worth_no_points():
    def markdown(**grading):
        cell = nbformat.v4.new_markdown_cell("question")
        cell.metadata["nbgrader"] = {"grade_id": "x", **grading}
        return cell

    assert is_mark_scheme(markdown(task=True, grade=False, points=0))
    assert not is_mark_scheme(markdown(task=True, grade=False, points=2))
    assert not is_mark_scheme(markdown(task=False, grade=True, solution=True, points=0))
    assert not is_mark_scheme(nbformat.v4.new_markdown_cell("plain text"))
