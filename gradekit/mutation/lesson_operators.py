"""Mutation operators for this lesson's own mistakes: autograd, precision, in place, identity.

Each one writes a mistake the lesson warns about: tracking switched off,
a copy or `no_grad` forgotten, float32 where float64 was asked for (built
in float32 and cast after, or sent through float32 on the way), in place
and out of place confused, `.data` used for the tensor, a product's
operands swapped or transposed, `sum` for `mean`, a graph kept or freed by
mistake, `==` (or the same memory) where identity was meant, a large finite
number for minus infinity, a number worked out by hand taken from autograd,
a forward-mode request answered in reverse mode.
"""

from __future__ import annotations

import ast
import builtins
import copy

from gradekit.mutation.operators import DELETE, Operator, with_fields

# Out-of-place tensor methods that have an in-place twin with a trailing underscore.
IN_PLACE_TWINS = frozenset(
    {"add", "sub", "mul", "div", "neg", "exp", "relu", "clamp", "zero", "fill", "copy", "abs", "pow"}
)
COPIES = frozenset({"clone", "detach", "copy"})
CONVERSIONS = frozenset({"to", "long", "int", "float", "double", "item", "tolist"})
TRANSPOSES = frozenset({"T", "mT", "t"})
PRODUCTS = frozenset({"matmul", "mm", "bmm", "mv"})
GRAPH_FLAGS = frozenset({"retain_graph", "create_graph"})
GRAD_MODES = frozenset({"no_grad", "inference_mode", "enable_grad"})
FINITE_STAND_IN = -1e9


def _attribute_call(node, names) -> bool:
    """`<receiver>.<name>(...)` for one of `names`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def _torch_attribute(node, name) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == name
        and isinstance(node.value, ast.Name)
        and node.value.id == "torch"
    )


def _method_call(receiver: ast.expr, name: str, args=()) -> ast.Call:
    return ast.Call(ast.Attribute(copy.deepcopy(receiver), name, ast.Load()), list(args), [])


def _keyword(node: ast.Call, name: str):
    return next((k for k in node.keywords if k.arg == name), None)


def _requires_grad(node):
    """Tracking left off: requires_grad=True flipped, or the requires_grad_() call dropped."""
    if _attribute_call(node, {"requires_grad_"}):
        return [copy.deepcopy(node.func.value)]
    if isinstance(node, ast.Call):
        flag = _keyword(node, "requires_grad")
        if flag is not None and isinstance(flag.value, ast.Constant) and isinstance(flag.value.value, bool):
            kept = [k for k in node.keywords if k is not flag]
            return [
                with_fields(node, keywords=kept + [ast.keyword("requires_grad", ast.Constant(not flag.value.value))])
            ]
    return []


def _copy_dropped(node):
    """`.clone()`, `.detach()` or `.copy()` left out: the result shares storage or graph with its source."""
    if _attribute_call(node, COPIES) and not node.args:
        return [copy.deepcopy(node.func.value)]
    return []


def _conversion_dropped(node):
    """A dtype conversion left out: `.to(...)`, `.long()`, `.double()` and the like return their receiver."""
    if _attribute_call(node, CONVERSIONS):
        return [copy.deepcopy(node.func.value)]
    return []


def _grad_mode_dropped(node):
    """`with torch.no_grad():` (or another grad mode) left out, its body kept."""
    if isinstance(node, ast.With) and len(node.items) == 1:
        context = node.items[0].context_expr
        if isinstance(context, ast.Call) and any(_torch_attribute(context.func, mode) for mode in GRAD_MODES):
            return [copy.deepcopy(node.body)]
    return []


def _grad_reset(node):
    """`x.grad = None` written as zeroing in place, or a zeroing written as dropping the gradient."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if (
            isinstance(target, ast.Attribute)
            and target.attr == "grad"
            and isinstance(node.value, ast.Constant)
            and node.value.value is None
        ):
            return [ast.Expr(_method_call(target, "zero_"))]
    call = node.value if isinstance(node, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "zero_":
        receiver = call.func.value
        if isinstance(receiver, ast.Attribute) and receiver.attr == "grad":
            return [ast.Assign([copy.deepcopy(receiver)], ast.Constant(None))]
    return []


def _precision(node):
    """float32 where float64 was asked for: the dtype swapped, built in float32 and cast after, or a float32 detour."""
    if _torch_attribute(node, "float64") or _torch_attribute(node, "double"):
        return [ast.Attribute(ast.Name("torch", ast.Load()), "float32", ast.Load())]
    if _attribute_call(node, {"double"}) and not node.args:
        return [with_fields(node, func=with_fields(node.func, attr="float"))]
    if isinstance(node, ast.Call):
        dtype = _keyword(node, "dtype")
        if dtype is not None and (_torch_attribute(dtype.value, "float64") or _torch_attribute(dtype.value, "double")):
            built = with_fields(node, keywords=[k for k in node.keywords if k is not dtype])
            return [_method_call(built, "double")]
    return _float32_detour(node)


def _through_float32(expression: ast.expr) -> ast.Call:
    """`expression.float().double()`: float64 again in dtype, float32 in its digits."""
    return _method_call(_method_call(expression, "float"), "double")


def _float32_detour(node):
    """A tensor sent through float32 and back on its way into arithmetic or into a function it is handed to.

    Only plain names are detoured: an operand of a binary operation, or the
    one argument of a call to a name that is not a builtin (a function the
    exercise hands in, evaluated at a point: `function(x)`, `f(point)`).
    """
    if isinstance(node, ast.BinOp):
        return [
            with_fields(node, **{side: _through_float32(getattr(node, side))})
            for side in ("left", "right")
            if isinstance(getattr(node, side), ast.Name)
        ]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and not hasattr(builtins, node.func.id)
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and not node.keywords
    ):
        return [with_fields(node, args=[_through_float32(node.args[0])])]
    return []


def _in_place(node):
    """In place written out of place and back: `a -= b` as `a = a - b`, `x.add_(y)` as `x.add(y)`."""
    if isinstance(node, ast.AugAssign):
        read = with_fields(node.target, ctx=ast.Load())
        return [
            ast.Assign([copy.deepcopy(node.target)], ast.BinOp(read, copy.deepcopy(node.op), copy.deepcopy(node.value)))
        ]
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.BinOp):
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and isinstance(value.left, ast.Name) and value.left.id == target.id:
            return [ast.AugAssign(copy.deepcopy(target), copy.deepcopy(value.op), copy.deepcopy(value.right))]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        name = node.func.attr
        if name.endswith("_") and not name.startswith("_") and name[:-1] in IN_PLACE_TWINS:
            return [with_fields(node, func=with_fields(node.func, attr=name[:-1]))]
        if name in IN_PLACE_TWINS:
            return [with_fields(node, func=with_fields(node.func, attr=name + "_"))]
    return []


def _data_instead(node):
    """`.data` used where the tensor (or its detached copy) was meant."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return [with_fields(node, target=ast.Attribute(copy.deepcopy(node.target), "data", ast.Store()))]
    if _attribute_call(node, {"detach"}) and not node.args:
        return [ast.Attribute(copy.deepcopy(node.func.value), "data", ast.Load())]
    return []


def _transposed(expression):
    return ast.Attribute(copy.deepcopy(expression), "T", ast.Load())


def _operands(node):
    """A product's operands swapped or one transposed, or a transpose left out."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        left, right = node.left, node.right
        return [
            with_fields(node, left=copy.deepcopy(right), right=copy.deepcopy(left)),
            with_fields(node, left=_transposed(left)),
            with_fields(node, right=_transposed(right)),
        ]
    if isinstance(node, ast.Call) and any(_torch_attribute(node.func, p) for p in PRODUCTS) and len(node.args) == 2:
        return [with_fields(node, args=[copy.deepcopy(node.args[1]), copy.deepcopy(node.args[0])])]
    if isinstance(node, ast.Attribute) and node.attr in TRANSPOSES - {"t"}:
        return [copy.deepcopy(node.value)]
    if _attribute_call(node, {"t"}) and not node.args:
        return [copy.deepcopy(node.func.value)]
    if isinstance(node, ast.Call):  # a pair of arguments (inputs, tangents) given in the wrong order
        return [
            with_fields(node, args=node.args[:i] + [_swapped(a)] + node.args[i + 1 :])
            for i, a in enumerate(node.args)
            if isinstance(a, ast.Tuple) and len(a.elts) == 2
        ]
    return []


def _swapped(pair: ast.Tuple) -> ast.Tuple:
    return with_fields(pair, elts=[copy.deepcopy(pair.elts[1]), copy.deepcopy(pair.elts[0])])


def _reduction(node):
    """`sum` for `mean` and back."""
    swap = {"sum": "mean", "mean": "sum"}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in swap:
        return [with_fields(node, func=with_fields(node.func, attr=swap[node.func.attr]))]
    return []


def _graph_kept(node):
    """A backward that keeps its graph flipped to free it, or the reverse."""
    if not _attribute_call(node, {"backward"}) and not (
        isinstance(node, ast.Call) and _torch_attribute(node.func, "grad")
    ):
        return []
    found = []
    for flag in node.keywords:
        if flag.arg in GRAPH_FLAGS and isinstance(flag.value, ast.Constant) and isinstance(flag.value.value, bool):
            flipped = ast.keyword(flag.arg, ast.Constant(not flag.value.value))
            found.append(with_fields(node, keywords=[flipped if k is flag else k for k in node.keywords]))
    return found


def _identity(node):
    """Identity written as equality: `a is b` as `a == b` or `torch.equal(a, b)`."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Is, ast.IsNot)):
        return []
    left, right = node.left, node.comparators[0]
    if isinstance(right, ast.Constant) and right.value is None:
        return []
    negated = isinstance(node.ops[0], ast.IsNot)
    equal = ast.Call(
        ast.Attribute(ast.Name("torch", ast.Load()), "equal", ast.Load()),
        [copy.deepcopy(left), copy.deepcopy(right)],
        [],
    )
    return [
        with_fields(node, ops=[ast.NotEq() if negated else ast.Eq()]),
        ast.UnaryOp(ast.Not(), equal) if negated else equal,
    ]


def _storage_shared(node):
    """A tensor that shares memory taken for the same tensor.

    `a is b` written as `a.data_ptr() == b.data_ptr()` (and `is not` as `!=`),
    or a `.clone()` written as `.detach()`, another tensor over the same memory.
    """
    if _attribute_call(node, {"clone"}) and not node.args and not node.keywords:
        return [with_fields(node, func=with_fields(node.func, attr="detach"))]
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Is, ast.IsNot)):
        return []
    left, right = node.left, node.comparators[0]
    if isinstance(right, ast.Constant) or isinstance(left, ast.Constant):
        return []
    same_memory = ast.NotEq() if isinstance(node.ops[0], ast.IsNot) else ast.Eq()
    return [ast.Compare(_method_call(left, "data_ptr"), [same_memory], [_method_call(right, "data_ptr")])]


def _is_minus_infinity(node) -> bool:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
    ):
        argument = node.args[0]
        return isinstance(argument, ast.Constant) and str(argument.value).strip().lower() in ("-inf", "-infinity")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand
        named_inf = isinstance(inner, ast.Attribute) and inner.attr == "inf"
        float_inf = (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id == "float"
            and len(inner.args) == 1
            and isinstance(inner.args[0], ast.Constant)
            and str(inner.args[0].value).lower() == "inf"
        )
        return named_inf or float_inf
    return False


def _finite_infinity(node):
    """Minus infinity replaced by a large finite negative number."""
    return [ast.Constant(FINITE_STAND_IN)] if _is_minus_infinity(node) else []


# Arithmetic a student can do by hand: no call, no attribute, no matrix product.
HAND_OPERATIONS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
# The same number through autograd (d/du of u * value at u = 1): reverse, forward and functional routes.
AUTOGRAD_ROUTES = (
    "torch.func.grad(lambda {unit}: {unit} * ({value}))(torch.tensor(1.0, dtype=torch.float64)).item()",
    "torch.func.jvp(lambda {unit}: {unit} * ({value}), (torch.tensor(1.0, dtype=torch.float64),),"
    " (torch.tensor(1.0, dtype=torch.float64),))[1].item()",
    "torch.autograd.functional.vjp(lambda {unit}: {unit} * ({value}), torch.tensor(1.0, dtype=torch.float64))[1].item()",
)
# A forward-mode request answered by a reverse-mode call with the same arguments and results.
REVERSE_FOR_FORWARD = {
    "torch.func.jvp": "torch.autograd.functional.jvp",  # the double-backward trick
    "torch.func.jacfwd": "torch.func.jacrev",
}


def _by_hand(node) -> bool:
    """Arithmetic on names and numbers only: a value worked out by hand."""
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, HAND_OPERATIONS) and _by_hand(node.left) and _by_hand(node.right)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub) and _by_hand(node.operand)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    return isinstance(node, ast.Name)


def _through_autograd(value: ast.expr) -> list[ast.expr]:
    names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    unit = next(name for name in ("unit", "unit_", "unit__") if name not in names)
    text = ast.unparse(value)
    return [ast.parse(route.format(unit=unit, value=text), mode="eval").body for route in AUTOGRAD_ROUTES]


def _autograd_for_arithmetic(node):
    """A number worked out by hand (returned, or passed to float()) taken from autograd instead."""
    if isinstance(node, ast.Return) and isinstance(node.value, ast.BinOp) and _by_hand(node.value):
        return [with_fields(node, value=route) for route in _through_autograd(node.value)]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.BinOp)
        and _by_hand(node.args[0])
    ):
        return [with_fields(node, args=[route]) for route in _through_autograd(node.args[0])]
    return []


def _dotted(node) -> str:
    """`torch.func.jvp` for that attribute chain; empty for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner else ""
    return ""


def _reverse_for_forward(node):
    """A forward-mode call (torch.func.jvp, jacfwd) replaced by its reverse-mode twin."""
    if isinstance(node, ast.Call) and _dotted(node.func) in REVERSE_FOR_FORWARD:
        twin = ast.parse(REVERSE_FOR_FORWARD[_dotted(node.func)], mode="eval").body
        return [with_fields(node, func=twin)]
    return []


LESSON_OPERATORS = (
    Operator("requires-grad", "tracking left off: requires_grad flipped or requires_grad_() dropped", _requires_grad),
    Operator("copy-dropped", ".clone(), .detach() or .copy() left out", _copy_dropped),
    Operator(
        "conversion-dropped", "a conversion (.to(...), .long(), .double(), .item(), ...) left out", _conversion_dropped
    ),
    Operator("grad-mode-dropped", "with torch.no_grad() (or another grad mode) left out", _grad_mode_dropped),
    Operator("grad-reset", "grad = None written as zero_() and back", _grad_reset),
    Operator(
        "precision",
        "float64 as float32, built in float32 and cast to float64 after, or a tensor sent through float32 and back",
        _precision,
    ),
    Operator("in-place", "in place written out of place and back", _in_place),
    Operator("data-instead", ".data used for the tensor or for detach()", _data_instead),
    Operator(
        "operands",
        "a product's operands swapped or transposed, a transpose left out, a pair argument swapped",
        _operands,
    ),
    Operator("reduction", "sum for mean and back", _reduction),
    Operator("graph-kept", "retain_graph or create_graph flipped", _graph_kept),
    Operator("identity", "is written as == or torch.equal", _identity),
    Operator(
        "storage-shared",
        "is written as the same data_ptr(), .clone() as .detach() over the same memory",
        _storage_shared,
    ),
    Operator("finite-infinity", "minus infinity written as a large finite number", _finite_infinity),
    Operator(
        "autograd-for-arithmetic",
        "a number worked out by hand taken from autograd (torch.func.grad, jvp or torch.autograd.functional.vjp)",
        _autograd_for_arithmetic,
    ),
    Operator(
        "reverse-for-forward",
        "a forward-mode call answered in reverse mode: torch.func.jvp as torch.autograd.functional.jvp, jacfwd as jacrev",
        _reverse_for_forward,
    ),
)

__all__ = ["LESSON_OPERATORS", "DELETE"]
