"""Negative controls for notebook 020_leaves."""
import torch

from solutions.controls import negative_control


@negative_control("op-after-requires-grad", fails=["test_scaled_parameter"])
def scaled_parameter__scaled_after_tracking(shape, scale, seed):
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, dtype=torch.float64, generator=generator, requires_grad=True)
    return values * scale


@negative_control("grad-on-by-default", fails=["test_scaled_parameter"])
def scaled_parameter__tracking_assumed(shape, scale, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, dtype=torch.float64, generator=generator) * scale


@negative_control("numpy-default-dtype", fails=["test_scaled_parameter"])
def scaled_parameter__default_dtype(shape, scale, seed):
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, generator=generator) * scale
    return values.requires_grad_()


@negative_control("intermediate-grad-not-retained", fails=["test_chain_gradients"])
def chain_gradients__not_retained(x):
    y = x**2
    w = torch.sin(y) + 5
    w.backward()
    return x.grad, y.grad


@negative_control("grad-by-formula", fails=["test_chain_gradients"])
def chain_gradients__by_hand(x):
    y = x**2
    return 2 * x * torch.cos(y), torch.cos(y)


@negative_control("grad-by-formula", fails=["test_chain_gradients"])
def chain_gradients__y_grad_by_formula(x):
    y = x**2
    w = torch.sin(y) + 5
    w.backward()
    # dw/dy is cos(y), so there is no need to keep y's gradient
    return x.grad, torch.cos(y).detach()


@negative_control("grad-by-formula", fails=["test_chain_gradients"])
def chain_gradients__assigned_by_hand(x):
    y = x**2
    y.retain_grad()
    # the derivatives are known in closed form, so store them where backward() would
    y.grad = torch.cos(y).detach()
    x.grad = (2 * x * torch.cos(y)).detach()
    return x.grad, y.grad


@negative_control("cut-path-carries-gradient", fails=["test_chain_gradients"])
def chain_gradients__y_made_a_leaf(x):
    # a leaf keeps its .grad after backward(), so y is computed untracked and made one
    with torch.no_grad():
        y = x**2
    y.requires_grad_()
    w = torch.sin(y) + 5
    w.backward()
    return x.grad, y.grad


@negative_control("none-grad-means-nonleaf", fails=["test_why_grad_is_none"])
def why_grad_is_none__always_non_leaf(tensor, output, backward_ran):
    # backward() only fills leaves, so a missing .grad means the tensor is not one
    return "non_leaf"


@negative_control("integer-labels-require-grad", fails=["test_can_require_grad"])
def can_require_grad__any_number(dtype):
    return dtype != torch.bool


@negative_control("complex-grad-unsupported", fails=["test_can_require_grad"])
def can_require_grad__real_floats_only(dtype):
    return dtype.is_floating_point


@negative_control("cast-restores-precision", fails=["test_scaled_parameter"])
def scaled_parameter__drawn_in_float32_then_cast(shape, scale, seed):
    generator = torch.Generator().manual_seed(seed)
    # .double() at the end makes the parameter float64, which is what the exercise asks for
    values = torch.randn(shape, generator=generator).double() * scale
    return values.requires_grad_()


@negative_control("graph-membership-by-value", fails=["test_why_grad_is_none"])
def why_grad_is_none__leaves_compared_by_value(tensor, output, backward_ran):
    if not tensor.requires_grad:
        return "not_tracked"
    if not tensor.is_leaf:
        return "non_leaf"
    if not output.requires_grad:
        return "no_grad"
    pending, connected = [output.grad_fn], False
    while pending and not connected:
        node = pending.pop()
        if node is None:
            continue
        leaf = getattr(node, "variable", None)
        # a leaf with the same shape and values is the same parameter
        connected = leaf is not None and leaf.shape == tensor.shape and torch.equal(leaf, tensor)
        pending.extend(parent for parent, _ in node.next_functions)
    if not connected:
        return "unused"
    return "reset" if backward_ran else "no_backward"


@negative_control("missing-grad-fn-means-no-grad", fails=["test_why_grad_is_none"])
def why_grad_is_none__leaf_output_taken_for_no_grad(tensor, output, backward_ran):
    if not tensor.requires_grad:
        return "not_tracked"
    if not tensor.is_leaf:
        return "non_leaf"
    if output.grad_fn is None:  # no recorded operation made the output
        return "no_grad"
    pending, seen = [output.grad_fn], set()
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if getattr(node, "variable", None) is tensor:
            return "reset" if backward_ran else "no_backward"
        pending.extend(parent for parent, _ in node.next_functions)
    return "unused"


@negative_control(
    "shared-storage-means-same-tensor",
    fails=["test_why_grad_is_none"],
    hidden_only="the page contrasts tensors equal in value, which this answer tells apart; only a twin sharing w's memory, which the page never builds, shows the mistake",
)
def why_grad_is_none__leaves_compared_by_memory(tensor, output, backward_ran):
    if not tensor.requires_grad:
        return "not_tracked"
    if not tensor.is_leaf:
        return "non_leaf"
    if not output.requires_grad:
        return "no_grad"
    pending, connected = [output.grad_fn], False
    while pending and not connected:
        node = pending.pop()
        if node is None:
            continue
        leaf = getattr(node, "variable", None)
        # a tensor is where its numbers live, so the same memory means the same tensor
        connected = leaf is not None and leaf.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
        pending.extend(parent for parent, _ in node.next_functions)
    if not connected:
        return "unused"
    return "reset" if backward_ran else "no_backward"


@negative_control(
    "floating-dtypes-listed-by-hand",
    fails=["test_can_require_grad"],
    hidden_only="every dtype the page names is in the hand-made list; the page leaves the rare dtypes that fall outside it to the grader",
)
def can_require_grad__known_dtypes_listed(dtype):
    # these are the floating and complex dtypes there are
    known = {torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex32, torch.complex64, torch.complex128}
    return dtype in known
