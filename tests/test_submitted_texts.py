"""Each submitted notebook is read once for the similarity report: its code and its written answers, by student;
one that cannot be read is named, and nothing but the assignment's notebooks is opened."""

import nbformat
import pytest
from test_answer_text import notebook_with

from gradekit.report.answer_text import notebook_text
from gradekit.report.submitted_texts import submitted_texts

pytestmark = pytest.mark.unit


def test_each_students_text_names_its_cells_and_a_broken_notebook_is_set_aside(tmp_path):
    good = tmp_path / "ann" / "autograd"
    good.mkdir(parents=True)
    answered = notebook_with(("code", "answer_x", True, "x = 1"), ("markdown", "why", True, "Because."))
    nbformat.write(answered, good / "010_a.ipynb")
    (good / "notes.ipynb").write_text("{ not the assignment's: never opened")
    broken = tmp_path / "bob" / "autograd"
    broken.mkdir(parents=True)
    (broken / "010_a.ipynb").write_text("{ not json")
    read = submitted_texts(tmp_path, "autograd", ["010_a"])
    assert read.code == {"010_a": {"ann": "# answer_x\nx = 1\n"}}
    assert read.written == {"010_a (written)": {"ann": "[why]\nBecause."}}
    assert list(read.unreadable) == ["bob"] and "010_a.ipynb" in read.unreadable["bob"]
    assert notebook_text(good / "010_a.ipynb") == read.code["010_a"]["ann"]
