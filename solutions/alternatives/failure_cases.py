"""Correct alternatives for notebook 080_failure_cases."""
import torch

from solutions.alternatives import correct_alternative


@correct_alternative("the copy is taken with detach().clone(), and the accumulation starts from a zeroed gradient, the same start as None")
def repeated_backward_report__zeroed_start(function, value):
    x = torch.full((), value, dtype=torch.float64).requires_grad_()
    out = function(x)
    out.backward()
    first_grad = x.grad.detach().clone()
    second_raises = False
    try:
        out.backward()
    except RuntimeError:
        second_raises = True
    x.grad.zero_()
    out = function(x)
    out.backward(retain_graph=True)
    out.backward()
    return first_grad, second_raises, x.grad


@correct_alternative("x += 1 is the same in-place change, and other errors escape because only the expected one is caught and checked")
def mutation_detected__augmented_assignment(operation):
    x = torch.tensor(2.0, dtype=torch.float64).requires_grad_()
    w = torch.tensor(3.0, dtype=torch.float64).requires_grad_()
    z = operation(x, w)
    with torch.no_grad():
        x += 1
    try:
        z.backward()
        return False
    except RuntimeError as error:
        if "inplace operation" not in str(error):
            raise
        return True


@correct_alternative("torch.autograd.backward and a leaf made from a double-precision tensor keep every step in float64")
def repeated_backward_report__autograd_backward(function, value):
    x = torch.as_tensor(float(value), dtype=torch.double).requires_grad_()
    output = function(x)
    torch.autograd.backward(output)
    first_grad = torch.clone(x.grad)
    try:
        torch.autograd.backward(output)
        second_raises = False
    except RuntimeError:
        second_raises = True
    x.grad = None
    output = function(x)
    torch.autograd.backward(output, retain_graph=True)
    torch.autograd.backward(output)
    return first_grad, second_raises, x.grad
