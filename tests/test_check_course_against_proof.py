"""Differential: the in-process check gives every proof subject the grades real nbgrader gives it, cell by cell."""

import pytest

pytestmark = pytest.mark.nbgrader


def _by_cell(grades):
    return {(g.notebook, g.cell): (g.score, g.max_score, g.diagnosed) for g in grades.cells}


def test_in_process_grades_equal_the_proof_grades(proof, checked_in_process):
    in_process = checked_in_process
    assert in_process.grades.keys() == proof.grades.keys()
    for subject, graded in proof.grades.items():
        assert _by_cell(in_process.grades[subject]) == _by_cell(graded), subject
