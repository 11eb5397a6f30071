"""`gradekit check`: the proof's rules hold for every notebook when the checks run in this process."""

import pytest

from gradekit.core.grades import CellGrade
from gradekit.proof.check_course import check_course, subject_answers

pytestmark = pytest.mark.notebook


def test_every_notebook_passes_the_proof_rules_in_process(checked_in_process):
    result = checked_in_process
    assert [str(v) for v in result.violations] == []
    assert len(result.subjects) == 2 + sum(1 for s in result.subjects if s.control)


def test_a_control_that_stops_failing_is_a_violation(course, manifest, monkeypatch):
    import gradekit.proof.check_course as module

    real = module.run_checks

    def everything_passes(script, answers, label="notebook", on_call=None):
        return tuple(o.__class__(o.cell, o.points, True) for o in real(script, answers, label, on_call))

    monkeypatch.setattr(module, "run_checks", everything_passes)
    result = check_course(course, manifest.only(["010_history"]), complete=False)
    reasons = {(v.student_id, v.reason.split(",")[0]) for v in result.violations}
    assert ("blank", "blank stubs must earn zero") in reasons
    assert any(r.startswith("must lose points") for _, r in reasons)
    assert isinstance(result.grades["reference"].cells[0], CellGrade)


def test_blank_answers_are_exactly_the_release_stubs(course, manifest):
    import nbformat

    from gradekit.core.cell_ids import cells_by_grade_id
    from gradekit.core.manifest import SCRIPTS_DIR
    from gradekit.core.notebook_script import read_script
    from gradekit.proof.subjects import BLANK_ID, Subject

    for entry in manifest.notebooks:
        script = read_script(SCRIPTS_DIR / f"{entry.name}.py")
        blank = subject_answers(course, manifest, script, Subject(BLANK_ID, (entry.name,)), entry.name)
        release = cells_by_grade_id(nbformat.read(course.release_dir / f"{entry.name}.ipynb", as_version=4))
        assert blank == {cell: release[cell].source for cell in blank}, entry.name
