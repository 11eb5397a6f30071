"""Correct alternatives for notebook 020_leaves."""
import torch

from solutions.alternatives import correct_alternative


@correct_alternative("scaling in place and wrapping in nn.Parameter keeps the same float64 digits in a leaf")
def scaled_parameter__scaled_in_place_as_parameter(shape, scale, seed):
    values = torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    values.mul_(scale)
    return torch.nn.Parameter(values)


@correct_alternative("a product is the same whichever factor comes first, and detach() then makes a fresh leaf")
def scaled_parameter__scale_first_then_detached(shape, scale, seed):
    generator = torch.Generator().manual_seed(seed)
    values = scale * torch.randn(shape, generator=generator, dtype=torch.float64, requires_grad=True)
    return values.detach().requires_grad_(True)


@correct_alternative("a recursive walk without a visited set still ends, since the graph has no cycles")
def why_grad_is_none__recursive_walk(tensor, output, backward_ran):
    if not tensor.requires_grad:
        return "not_tracked"
    if not tensor.is_leaf:
        return "non_leaf"
    if not output.requires_grad:
        return "no_grad"

    def reaches(node):
        if node is None:
            return False
        if getattr(node, "variable", None) is tensor:
            return True
        return any(reaches(parent) for parent, _ in node.next_functions)

    if not reaches(output.grad_fn):
        return "unused"
    return "reset" if backward_ran else "no_backward"


@correct_alternative("probing with an empty tensor asks PyTorch itself; the warnings of rare dtypes change no answer")
def can_require_grad__asks_pytorch(dtype):
    try:
        torch.empty(0, dtype=dtype).requires_grad_()
    except RuntimeError:
        return False
    return True


@correct_alternative("collecting every leaf behind the output first and testing membership by id() is still identity")
def why_grad_is_none__leaf_ids_collected(tensor, output, backward_ran):
    if not tensor.requires_grad:
        return "not_tracked"
    if not tensor.is_leaf:
        return "non_leaf"
    if not output.requires_grad:
        return "no_grad"
    leaf_ids, pending = set(), [output.grad_fn]
    while pending:
        node = pending.pop()
        if node is None:
            continue
        if hasattr(node, "variable"):
            leaf_ids.add(id(node.variable))
        pending.extend(parent for parent, _ in node.next_functions)
    if id(tensor) not in leaf_ids:
        return "unused"
    return "reset" if backward_ran else "no_backward"


@correct_alternative("torch.finfo describes exactly the floating and complex dtypes and refuses every other one")
def can_require_grad__finfo_exists(dtype):
    try:
        torch.finfo(dtype)
    except TypeError:
        return False
    return True
