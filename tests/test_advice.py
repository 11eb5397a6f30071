import pytest

from gradekit.authoring.advice import (
    Diagnosis,
    advice_of,
    carries_another,
    diagnoses_in_code,
    error_table,
    recommended,
    says_what_to_do,
)

pytestmark = pytest.mark.unit

BARE_BACKWARD = (
    "backward() was called with no argument on an output with more than one element: reduce the output "
    "to one number first (with .sum(), for example), or pass backward() a tensor of weights"
)


def test_the_advice_is_the_clauses_that_open_with_an_instruction():
    assert advice_of(BARE_BACKWARD) == [
        "reduce the output to one number first (with .sum()",
        "pass backward() a tensor of weights",
    ]
    assert advice_of("x.grad is None; build in float64, then call requires_grad_()") == [
        "build in float64",
        "call requires_grad_()",
    ]


def test_what_the_advice_says_not_to_do_is_no_recommendation():
    said = "vjp built a Jacobian: pass v to backward(v) and return x.grad instead of building the Jacobian"
    assert advice_of(said) == ["pass v to backward(v)", "return x.grad"]
    assert recommended(said, ("build the jacobian", "building the jacobian")) == []
    assert recommended("do not reduce the output first", ("reduce the output",)) == []


def test_a_recommended_phrase_is_found_whatever_its_case():
    assert recommended(BARE_BACKWARD, ("Reduce the output", ".sum()", "jacobian(")) == ["Reduce the output", ".sum()"]
    # A phrase in what the diagnosis states, not in what it advises, is no recommendation.
    assert recommended("y.sum().backward() computes 1ᵀJ; call y.backward(v)", (".sum()",)) == []


def test_a_diagnosis_says_what_to_do_with_an_instruction_or_a_prohibition():
    assert says_what_to_do(BARE_BACKWARD)
    assert says_what_to_do("The loss is a tensor. Never keep it across steps.")
    assert not says_what_to_do("W.grad is not the gradient of the mean loss (largest difference 1.26).")


def test_the_messages_of_a_cell_are_read_with_the_misconception_each_names():
    source = """
ERRORS = (("scalar outputs", "m-one-x", "no cotangent: " + "pass v"),)
expect(ok, f"{shown} is wrong: call backward({name})", "m-two-x")
expect_close(a, b, "not close: compare in float64", misconception="m-three-x")
result = call_answer(f, x, known_errors=ERRORS)
with checks.blaming_stand_ins(f"{shown} ran autograd: multiply by hand", "m-four-x"):
    pass
"""
    found, shared = diagnoses_in_code(source, "010_x/test_f")
    assert {(d.misconception, d.text) for d in found} == {
        ("m-one-x", "no cotangent: pass v"),
        ("m-two-x", "… is wrong: call backward(…)"),
        ("m-three-x", "not close: compare in float64"),
        ("m-four-x", "… ran autograd: multiply by hand"),
    }
    assert not shared
    assert diagnoses_in_code("call_answer(f, x)", "010_x/test_g")[1]
    assert diagnoses_in_code("def (", "010_x/test_h") == ([], False)


def test_the_shared_error_table_is_read_by_name():
    source = 'COMMON = (("a second time", "m-one-x", "freed: call it once"),)\nOTHER = (("x", "m-two-x", "y"),)'
    assert [(d.misconception, d.text, d.where) for d in error_table(source, "COMMON", "checks.py")] == [
        ("m-one-x", "freed: call it once", "checks.py")
    ]


def test_a_message_that_only_carries_another_is_told_apart_from_one_that_says_nothing():
    assert carries_another(Diagnosis("… (largest difference …)", "", "autograd_checks.py"))
    assert not carries_another(Diagnosis("… should have shape …, got …", "", "autograd_checks.py"))
    assert not says_what_to_do("vjp(f, x, v) should have shape (2, 3), got (2, 2, 2, 3)")
    assert says_what_to_do("vjp(f, x, v) should have shape (2, 3), got (2, 2, 2, 3): return x.grad")
