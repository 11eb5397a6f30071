"""Correct alternatives for notebook 010_history."""
import torch

from solutions.alternatives import correct_alternative


@correct_alternative("a leaf made by marking a fresh float64 tensor afterwards is still a leaf")
def float64_leaf__marked_after_building(values):
    return torch.tensor(values, dtype=torch.float64).requires_grad_(True)


@correct_alternative("built from a NumPy float64 array: torch keeps NumPy's dtype")
def float64_leaf__from_numpy(values):
    import numpy as np  # the answer cell is all a submission has: it imports what it uses

    return torch.from_numpy(np.array(values, dtype=np.float64)).requires_grad_()


@correct_alternative("pow and torch.sum build the same graph as x * x and .sum()")
def square_sum_grad__power_and_function(x):
    torch.sum(x.pow(2)).backward()
    return x.grad


@correct_alternative("a float() of the loss before backward warns in some versions but changes nothing")
def gradient_at__reads_the_value_first(function, values):
    point = torch.tensor([float(v) for v in values], dtype=torch.float64, requires_grad=True)
    value = function(point)
    _ = float(value)
    value.backward()
    return point.grad


@correct_alternative("torch.autograd.grad returns the gradient that backward() would store, to the same digits")
def gradient_at__autograd_grad(function, values):
    point = torch.as_tensor([float(v) for v in values], dtype=torch.float64).requires_grad_()
    (gradient,) = torch.autograd.grad(function(point), point)
    return gradient


@correct_alternative("a dot product of x with itself is the same sum of squares, and its gradient is 2x in float64")
def square_sum_grad__dot_product(x):
    torch.dot(x, x).backward()
    return x.grad
