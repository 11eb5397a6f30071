"""General mutation operators: the slips any Python code can suffer.

The set follows the operators mutation tools for Python agree on (arithmetic,
comparison and boolean replacement, numbers moved by one, a loop that runs
zero times, a statement or a `raise` removed, a call's argument left out);
the code is ours. Each operator maps one syntax node to the nodes that may
replace it: an empty list leaves it alone, `DELETE` removes a statement.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from typing import Callable, Iterable, TypeGuard, TypeVar

DELETE = object()  # a replacement meaning: remove this statement
_Node = TypeVar("_Node", bound=ast.AST)


@dataclasses.dataclass(frozen=True)
class Operator:
    name: str
    summary: str
    mutate: Callable[[ast.AST], Iterable[object]]


ARITHMETIC_SWAPS = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.Div,),
    ast.Div: (ast.Mult,),
    ast.Pow: (ast.Mult,),
    ast.FloorDiv: (ast.Div,),
    ast.MatMult: (ast.Mult,),
    ast.Mod: (ast.FloorDiv,),
}
COMPARISON_SWAPS = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}


def with_fields(node: _Node, **fields) -> _Node:
    """A copy of `node` with some fields replaced."""
    changed = copy.deepcopy(node)
    for name, value in fields.items():
        setattr(changed, name, value)
    return changed


def _arithmetic(node):
    if isinstance(node, ast.BinOp):
        return [with_fields(node, op=swap()) for swap in ARITHMETIC_SWAPS.get(type(node.op), ())]
    if isinstance(node, ast.AugAssign):
        return [with_fields(node, op=swap()) for swap in ARITHMETIC_SWAPS.get(type(node.op), ())]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return [copy.deepcopy(node.operand)]
    return []


def _comparison(node):
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return []
    return [with_fields(node, ops=[swap()]) for swap in COMPARISON_SWAPS.get(type(node.ops[0]), ())]


def _boolean(node):
    if isinstance(node, ast.BoolOp):
        return [with_fields(node, op=ast.Or() if isinstance(node.op, ast.And) else ast.And())]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return [copy.deepcopy(node.operand)]
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return [ast.Constant(not node.value)]
    return []


def _number(node):
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return []
    if isinstance(node.value, int):
        return [ast.Constant(node.value + 1), ast.Constant(node.value - 1)]
    if isinstance(node.value, float):
        return [ast.Constant(node.value * 10 if node.value else 1.0)]
    return []


def _string(node):
    """A string constant emptied (the docstring is never visited)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        return [ast.Constant("")]
    return []


def _is_call_statement(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)


def _statement_removed(node):
    """A call made for its effect, a `raise`, a `break` or `continue`, or an attribute assignment, left out."""
    if _is_call_statement(node) or isinstance(node, (ast.Raise, ast.Break, ast.Continue)):
        return [DELETE]
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Attribute) for t in node.targets):
        return [DELETE]
    return []


def _argument_removed(node):
    if not isinstance(node, ast.Call):
        return []
    return [with_fields(node, keywords=node.keywords[:i] + node.keywords[i + 1 :]) for i in range(len(node.keywords))]


def _is_range(node: ast.AST) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"


def _shifted(expression: ast.expr, by: int) -> ast.expr:
    operator = ast.Add() if by > 0 else ast.Sub()
    return ast.BinOp(copy.deepcopy(expression), operator, ast.Constant(abs(by)))


def _loop_bound(node):
    """A range one step too short or too long at either end, or a loop that never runs."""
    if isinstance(node, ast.For):
        found = [with_fields(node, iter=ast.List(elts=[], ctx=ast.Load()))]
        if _is_range(node.iter) and not node.iter.keywords and 1 <= len(node.iter.args) <= 2:
            args = node.iter.args
            stop = len(args) - 1
            for by in (-1, 1):
                moved = args[:stop] + [_shifted(args[stop], by)]
                found.append(with_fields(node, iter=with_fields(node.iter, args=moved)))
            if len(args) == 2:
                found.append(with_fields(node, iter=with_fields(node.iter, args=[_shifted(args[0], 1), args[1]])))
        return found
    return []


GENERAL_OPERATORS = (
    Operator(
        "arithmetic", "an arithmetic operator replaced (+ -, * /, ** *, @ *) or a minus sign dropped", _arithmetic
    ),
    Operator(
        "comparison",
        "a comparison moved across its boundary or negated (< <=, == !=, is / is not, in / not in)",
        _comparison,
    ),
    Operator("boolean", "and / or swapped, a not dropped, True / False flipped", _boolean),
    Operator("number", "an integer moved by one, a float scaled by ten", _number),
    Operator("string", "a string constant emptied", _string),
    Operator(
        "statement-removed",
        "a call made for its effect, a raise, break, continue or attribute assignment left out",
        _statement_removed,
    ),
    Operator("argument-removed", "one keyword argument of a call left out", _argument_removed),
    Operator("loop-bound", "a range one step short or long at either end, or a loop that runs zero times", _loop_bound),
)
