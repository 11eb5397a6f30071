"""Reference answers for notebook 020_leaves (lesson section 2)."""
import torch


def scaled_parameter(shape, scale, seed):
    """Return a float64 parameter of `shape` holding standard normal draws times `scale`.

    Draw the values with torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)).
    The result must require grad and be a leaf, so that backward() fills its .grad.
    """
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, dtype=torch.float64, generator=generator) * scale
    return values.requires_grad_()


def chain_gradients(x):
    """From the one-number float64 leaf `x`, build y = x**2, z = sin(y), w = z + 5 and call w.backward().

    Return the pair (gradient of w with respect to x, gradient of w with respect to y),
    both read from .grad after backward().
    """
    y = x**2
    y.retain_grad()
    w = torch.sin(y) + 5
    w.backward()
    return x.grad, y.grad


def why_grad_is_none(tensor, output, backward_ran):
    """Return the label from GRAD_NONE_REASONS that explains why `tensor.grad` is None.

    `output` is the tensor that backward() was (or would have been) called on;
    `backward_ran` says whether output.backward() was called. Check the reasons in the table's order.
    "no_grad" means output.requires_grad is False: nothing was recorded for the output, whether it
    was computed inside torch.no_grad() or, in grad mode, from tensors none of which requires
    grad. `tensor` is connected only when it is itself (the same object, not an equal copy) a leaf
    of the graph behind output.grad_fn; an output that is a leaf has no graph behind it.
    """
    if not tensor.requires_grad:
        return "not_tracked"
    if not tensor.is_leaf:
        return "non_leaf"
    if not output.requires_grad:
        return "no_grad"
    pending, seen = [output.grad_fn], set()
    connected = False
    while pending and not connected:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        connected = getattr(node, "variable", None) is tensor
        pending.extend(parent for parent, _ in node.next_functions)
    if not connected:
        return "unused"
    if not backward_ran:
        return "no_backward"
    return "reset"


def can_require_grad(dtype):
    """Return True when a tensor of `dtype` may require gradients, and False when PyTorch refuses.

    Any torch dtype may be asked about, the rare ones included; the function must not raise.
    """
    # Reading the dtype's kind builds no tensor, so experimental dtypes cannot warn here.
    return dtype.is_floating_point or dtype.is_complex
