"""Reference answers for notebook 010_history (lesson section 1)."""
import torch


def float64_leaf(values):
    """Return a float64 tensor holding `values` that requires grad and is a leaf.

    `values` is a list of plain Python numbers (ints or floats).
    """
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def square_sum_grad(x):
    """Compute sum(x * x) from the leaf `x`, call backward, and return x.grad.

    Let autograd find the derivative: do not write the formula yourself.
    """
    total = (x * x).sum()
    total.backward()
    return x.grad


def gradient_at(function, values):
    """Return the gradient of the scalar `function` at `values`, as a float64 tensor.

    `function` maps a float64 tensor to a one-element tensor; `values` is a list of numbers.
    """
    point = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    function(point).backward()
    return point.grad
