"""The blind set: answers written from the release alone, graded in process beside the reference."""

import tomllib
from pathlib import Path

import pytest

from gradekit.commands.cli import main
from gradekit.core.catalog import load_catalog
from gradekit.mutation.blind import (
    BlindAnswer,
    BlindResult,
    BlindSet,
    Judgement,
    exercise_of,
    load_answers,
    load_judgements,
    what_it_said,
)

BLIND_SET = Path(__file__).resolve().parent / "blind_answers"


@pytest.mark.unit
def test_every_blind_answer_fills_a_cell_of_the_manifest_and_says_what_is_wrong_with_it(manifest):
    answers = load_answers(BLIND_SET)
    assert len({answer.id for answer in answers}) == len(answers)
    for answer in answers:
        assert exercise_of(manifest, answer).notebook == answer.notebook
        assert answer.correct or answer.mistake, f"{answer.id} is wrong but does not say why"
        compile(answer.code, answer.id, "exec")


@pytest.mark.unit
def test_a_judgement_names_a_wrong_answer_of_the_set_and_an_entry_of_the_catalog_or_none():
    wrong = {answer.id for answer in load_answers(BLIND_SET) if not answer.correct}
    catalog = set(load_catalog())
    judgements = load_judgements(BLIND_SET)
    assert judgements
    for answer_id, judgement in judgements.items():
        assert answer_id in wrong
        assert judgement.catalog == "" or judgement.catalog in catalog
        assert judgement.reason


def _result(answer_id: str, correct: bool, kept: float, named: tuple[str, ...] = ()) -> BlindResult:
    answer = BlindAnswer("010_history", answer_id, "float64_leaf", correct, "pass", "" if correct else "a slip")
    return BlindResult(answer, kept, 2.0, named, "" if kept == 2.0 else "it failed")


@pytest.mark.unit
def test_a_blind_set_sorts_its_results_into_grader_bugs_gaps_unnamed_and_misnamed_mistakes():
    results = (
        _result("right-kept", True, 2.0),
        _result("right-lost", True, 0.0),
        _result("wrong-kept", False, 2.0),
        _result("wrong-named", False, 0.0, ("numpy-default-dtype",)),
        _result("wrong-misnamed", False, 0.0, ("grad-by-formula",)),
        _result("wrong-unnamed", False, 0.0),
    )
    judgements = {"wrong-misnamed": Judgement("numpy-default-dtype", "a float32 build")}
    blind = BlindSet(results, judgements, 1.0)
    assert [r.answer.id for r in blind.correct_that_lost] == ["right-lost"]
    assert [r.answer.id for r in blind.wrong_that_kept] == ["wrong-kept"]
    assert [r.answer.id for r in blind.caught] == ["wrong-named", "wrong-misnamed", "wrong-unnamed"]
    assert [r.answer.id for r in blind.caught_unnamed] == ["wrong-unnamed"]
    assert [r.answer.id for r in blind.caught_misnamed] == ["wrong-misnamed"]


def _two_answer_set(folder: Path) -> None:
    """The blind set's numpy route (correct) and its default-dtype slip (wrong), as a folder of their own."""
    chosen = {"float64_leaf-numpy-route", "float64_leaf-default-dtype"}
    data = tomllib.loads((BLIND_SET / "010_history.toml").read_text())
    lines = ['notebook = "010_history"']
    for entry in data["answer"]:
        if entry["id"] in chosen:
            lines += ["[[answer]]", *(f"{key} = {_toml_value(value)}" for key, value in entry.items())]
    (folder / "010_history.toml").write_text("\n".join(lines) + "\n")


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"'''\n{value}'''" if "\n" in value else f'"{value}"'


@pytest.mark.notebook
def test_the_blind_command_grades_each_answer_beside_the_reference_and_writes_its_figure(tmp_path, capsys):
    _two_answer_set(tmp_path)
    figure = tmp_path / "blind-set.md"
    code = main(["blind", "--notebook", "010_history", "--answers", str(tmp_path), "--figures", str(figure)])
    said = capsys.readouterr().out
    assert code == 0
    assert "2 blind answers graded" in said and "0 correct lost points" in said and "1 of 1 caught named" in said
    first, blank, header, rule, row, *rest = figure.read_text().splitlines()
    assert (
        first
        == f"<!-- written by: python -m gradekit blind --answers {tmp_path.as_posix()} --figures {figure.as_posix()} -->"
    )
    assert row.startswith("| 2 | 1 | 1 | 0 | 0 | 1 | 1 | 0 | 0 | 0 |")


@pytest.mark.unit
def test_what_a_check_said_is_its_diagnosis_or_the_error_line_never_the_traceback():
    traceback = 'Traceback (most recent call last):\n  File "<cell>", line 3, in f\nRuntimeError: sizes differ\n'
    assert what_it_said(traceback + "Diagnosis: f raised RuntimeError: sizes differ\n") == (
        "Diagnosis: f raised RuntimeError: sizes differ"
    )
    assert what_it_said(traceback) == "RuntimeError: sizes differ"
