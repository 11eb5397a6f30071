"""Mutation operators: each writes the mistake it names, and only valid Python."""

import ast

import pytest

from gradekit.mutation.lesson_operators import LESSON_OPERATORS
from gradekit.mutation.mutants import function_mutants
from gradekit.mutation.operators import GENERAL_OPERATORS

pytestmark = pytest.mark.unit

OPERATORS = {op.name: op for op in GENERAL_OPERATORS + LESSON_OPERATORS}


def changed_lines(source: str, operator: str) -> set[str]:
    """The mutated lines each mutant of `operator` writes, as ast.unparse spells them."""
    mutants = function_mutants("000_x", "f", source, (OPERATORS[operator],))
    return {line.strip()[1:].strip() for m in mutants for line in m.diff.splitlines()[2:] if line.startswith("+")}


def test_precision_swaps_the_dtype_and_builds_then_casts():
    found = changed_lines("def f(v):\n    return torch.tensor(v, dtype=torch.float64)\n", "precision")
    assert found == {"return torch.tensor(v, dtype=torch.float32)", "return torch.tensor(v).double()"}


def test_precision_sends_an_operand_or_a_handed_in_function_s_point_through_float32():
    assert changed_lines("def f(x):\n    return (x * x).sum()\n", "precision") == {
        "return (x.float().double() * x).sum()",
        "return (x * x.float().double()).sum()",
    }
    assert changed_lines("def f(function, x):\n    return function(x)\n", "precision") == {
        "return function(x.float().double())"
    }
    # builtins, calls of several arguments and attribute calls keep their arguments as they are
    assert changed_lines("def f(x, g, y):\n    return len(x) + g(x, y) + x.sum(y)\n", "precision") == set()


def test_requires_grad_is_flipped_or_its_call_dropped():
    assert changed_lines("def f(v):\n    return torch.ones(2, requires_grad=True)\n", "requires-grad") == {
        "return torch.ones(2, requires_grad=False)"
    }
    assert changed_lines("def f(v):\n    return v.double().requires_grad_()\n", "requires-grad") == {
        "return v.double()"
    }


def test_copies_and_grad_modes_are_dropped():
    assert changed_lines("def f(x):\n    return x.detach().clone()\n", "copy-dropped") == {
        "return x.clone()",
        "return x.detach()",
    }
    source = "def f(p, g):\n    with torch.no_grad():\n        p -= g\n"
    assert changed_lines(source, "grad-mode-dropped") == {"p -= g"}


def test_a_dtype_conversion_is_left_out():
    assert changed_lines("def f(y):\n    return torch.as_tensor(y).to(torch.int64)\n", "conversion-dropped") == {
        "return torch.as_tensor(y)"
    }


def test_a_string_is_emptied_and_a_pair_argument_swapped():
    assert changed_lines("def f(s):\n    return {'a': 'b'}[s]\n", "string") == {
        "return {'': 'b'}[s]",
        "return {'a': ''}[s]",
    }
    assert changed_lines("def f(X, W, dX, dW):\n    return jvp(f, (X, W), (dX, dW))\n", "operands") == {
        "return jvp(f, (W, X), (dX, dW))",
        "return jvp(f, (X, W), (dW, dX))",
    }


def test_in_place_and_out_of_place_trade_places():
    assert changed_lines("def f(p, g):\n    p -= g\n", "in-place") == {"p = p - g"}
    assert changed_lines("def f(p, g):\n    p = p - g\n    return p\n", "in-place") == {"p -= g"}
    assert changed_lines("def f(p):\n    p.add_(1)\n", "in-place") == {"p.add(1)"}


def test_grad_reset_trades_none_for_zeroing():
    assert changed_lines("def f(p):\n    p.grad = None\n", "grad-reset") == {"p.grad.zero_()"}
    assert changed_lines("def f(p):\n    p.grad.zero_()\n", "grad-reset") == {"p.grad = None"}


def test_products_are_swapped_or_transposed():
    assert changed_lines("def f(a, b):\n    return a @ b\n", "operands") == {
        "return b @ a",
        "return a.T @ b",
        "return a @ b.T",
    }
    assert changed_lines("def f(a, b):\n    return a.T\n", "operands") == {"return a"}


def test_identity_becomes_equality_but_none_checks_stay():
    assert changed_lines("def f(a, b):\n    return a is b\n", "identity") == {
        "return a == b",
        "return torch.equal(a, b)",
    }
    assert changed_lines("def f(a):\n    return a is None\n", "identity") == set()


def test_storage_sharing_stands_in_for_identity_and_for_a_copy():
    assert changed_lines("def f(a, b):\n    return a is b\n", "storage-shared") == {
        "return a.data_ptr() == b.data_ptr()"
    }
    assert changed_lines("def f(a, b):\n    return a is not b\n", "storage-shared") == {
        "return a.data_ptr() != b.data_ptr()"
    }
    assert changed_lines("def f(x):\n    return x.grad.clone()\n", "storage-shared") == {"return x.grad.detach()"}
    assert changed_lines("def f(a):\n    return a is None or a.clone(memory_format=m)\n", "storage-shared") == set()


def test_minus_infinity_becomes_a_large_finite_number():
    for spelling in ("-math.inf", "float('-inf')", "-torch.inf", "-float('inf')"):
        assert changed_lines(f"def f(s, m):\n    return s.masked_fill(m, {spelling})\n", "finite-infinity") == {
            "return s.masked_fill(m, -1000000000.0)"
        }


def test_loop_bounds_move_by_one_or_to_nothing():
    found = changed_lines("def f(n):\n    for i in range(n):\n        print(i)\n", "loop-bound")
    assert found == {"for i in []:", "for i in range(n - 1):", "for i in range(n + 1):"}


def test_removed_statements_and_raises_leave_valid_code():
    source = 'def f(x):\n    """Doc."""\n    if x:\n        raise ValueError(x)\n    x.backward()\n'
    mutants = function_mutants("000_x", "f", source, (OPERATORS["statement-removed"],))
    assert len(mutants) == 2
    for mutant in mutants:
        ast.parse(mutant.source)
        assert '"""Doc."""' in mutant.source or "'Doc.'" in mutant.source


def test_the_docstring_is_never_mutated():
    mutants = function_mutants("000_x", "f", 'def f():\n    """Return 1."""\n    return 1\n')
    assert {m.change for m in mutants} == {"- return 1 | + return 2", "- return 1 | + return 0"}


def test_ids_are_stable_and_distinct():
    source = "def f(a, b):\n    return (a @ b).sum() + 1\n"
    first, second = function_mutants("000_x", "f", source), function_mutants("000_x", "f", source)
    assert [m.id for m in first] == [m.id for m in second]
    assert len({m.id for m in first}) == len(first)
    assert all(m.id.startswith("000-f-") for m in first)


def test_a_number_worked_out_by_hand_is_taken_from_autograd_by_each_route():
    found = changed_lines("def f(x, unit):\n    return 3.0 * x ** 2 * unit\n", "autograd-for-arithmetic")
    value = "(3.0 * x ** 2 * unit)"  # the lambda's own name stays clear of the function's names
    one = "torch.tensor(1.0, dtype=torch.float64)"
    assert found == {
        f"return torch.func.grad(lambda unit_: unit_ * {value})({one}).item()",
        f"return torch.func.jvp(lambda unit_: unit_ * {value}, ({one},), ({one},))[1].item()",
        f"return torch.autograd.functional.vjp(lambda unit_: unit_ * {value}, {one})[1].item()",
    }
    assert {
        line.split("(lambda")[0]
        for line in changed_lines("def f(e):\n    return {'a': float(2 * e)}\n", "autograd-for-arithmetic")
    } == {
        "return {'a': float(torch.func.grad",
        "return {'a': float(torch.func.jvp",
        "return {'a': float(torch.autograd.functional.vjp",
    }


def test_only_arithmetic_on_names_and_numbers_counts_as_by_hand():
    for source in (
        "def f(h, W):\n    return h @ W + 1\n",
        "def f(t, y):\n    return t / len(y)\n",
        "def f(t):\n    return float(t.sum() * 2)\n",
        "def f(t):\n    return t\n",
        "def f(a, b):\n    return a < b\n",
    ):
        assert changed_lines(source, "autograd-for-arithmetic") == set(), source


def test_a_forward_mode_call_is_answered_in_reverse_mode():
    source = "def f(g, X, dX):\n    return torch.func.jvp(g, (X,), (dX,)), torch.func.jacfwd(g)(X)\n"
    assert changed_lines(source, "reverse-for-forward") == {
        "return (torch.autograd.functional.jvp(g, (X,), (dX,)), torch.func.jacfwd(g)(X))",
        "return (torch.func.jvp(g, (X,), (dX,)), torch.func.jacrev(g)(X))",
    }
    assert changed_lines("def f(g, X, dX):\n    return jvp(g, (X,), (dX,))\n", "reverse-for-forward") == set()


def test_the_autograd_mutants_compute_the_number_they_replace():
    import torch

    for source in ("def f(x):\n    return 3.0 * x ** 2\n", "def f(x):\n    return {'a': float(2 * x - 1)}\n"):
        reference_namespace, mutant_namespace = {"torch": torch}, {"torch": torch}
        exec(source, reference_namespace)
        for mutant in function_mutants("000_x", "f", source, (OPERATORS["autograd-for-arithmetic"],)):
            exec(mutant.source, mutant_namespace)
            assert mutant_namespace["f"](1.7) == reference_namespace["f"](1.7), mutant.change
