"""Negative controls for notebook 080_failure_cases."""
import torch

from solutions.controls import negative_control


@negative_control("backward-overwrites-grad", fails=["test_repeated_backward_report"])
def repeated_backward_report__reset_between_calls(function, value):
    x = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    first_grad = x.grad.clone()
    try:
        y.backward()
    except RuntimeError:
        second_raises = True
    else:
        second_raises = False
    y = function(x)
    for retain in (True, False):
        x.grad = None  # each backward writes a fresh gradient, so start each one clean
        y.backward(retain_graph=retain)
    return first_grad, second_raises, x.grad


@negative_control("graph-survives-backward", fails=["test_repeated_backward_report"])
def repeated_backward_report__graph_kept(function, value):
    x = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    first_grad = x.grad.clone()
    second_raises = False  # the graph is still attached to y, so it can be walked again
    x.grad = None
    y = function(x)
    y.backward()
    y.backward()
    return first_grad, second_raises, x.grad


@negative_control("mutation-lookup-by-op", fails=["test_mutation_detected"])
def mutation_detected__product_heuristic(operation):
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    z = operation(x, w)
    # A product needs the other factor in backward, a sum does not.
    return type(z.grad_fn).__name__.startswith("Mul")


@negative_control("inplace-leaf-in-grad-mode", fails=["test_mutation_detected"])
def mutation_detected__mutated_in_grad_mode(operation):
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    z = operation(x, w)
    x.add_(1)
    try:
        z.backward()
    except RuntimeError:
        return True
    return False


@negative_control("second-backward-always-raises", fails=["test_repeated_backward_report"])
def repeated_backward_report__second_call_assumed_to_fail(function, value):
    x = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    first_grad = x.grad.clone()
    second_raises = True  # backward() frees the graph, so there is nothing left to walk
    x.grad = None
    y = function(x)
    y.backward(retain_graph=True)
    y.backward()
    return first_grad, second_raises, x.grad


@negative_control("grad-attribute-is-snapshot", fails=["test_repeated_backward_report"])
def repeated_backward_report__grad_not_copied(function, value):
    x = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    first_grad = x.grad  # the gradient after the first call
    try:
        y.backward()
    except RuntimeError:
        second_raises = True
    else:
        second_raises = False
    x.grad = None
    y = function(x)
    y.backward(retain_graph=True)
    y.backward()
    return first_grad, second_raises, x.grad


@negative_control("rebinding-is-in-place", fails=["test_mutation_detected"])
def mutation_detected__rebinds_x(operation):
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    z = operation(x, w)
    with torch.no_grad():
        x = x + 1
    try:
        z.backward()
    except RuntimeError as error:
        if "inplace operation" in str(error):
            return True
        raise
    return False


@negative_control("data-attribute-is-safe", fails=["test_mutation_detected"])
def mutation_detected__changed_through_data(operation):
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    z = operation(x, w)
    x.data.add_(1)  # .data is not tracked, so no torch.no_grad() is needed
    try:
        z.backward()
    except RuntimeError as error:
        if "inplace operation" in str(error):
            return True
        raise
    return False


@negative_control("any-backward-error-is-mutation", fails=["test_mutation_detected"])
def mutation_detected__any_error_counts(operation):
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    z = operation(x, w)
    with torch.no_grad():
        x.add_(1)
    try:
        z.backward()
    except RuntimeError:
        return True  # backward refused, so it must have seen the change
    return False


@negative_control("cast-restores-precision", fails=["test_repeated_backward_report"])
def repeated_backward_report__float32_leaf_cast_after(function, value):
    x = torch.tensor(value, requires_grad=True)
    y = function(x)
    y.backward()
    # the exercise wants float64 gradients, so cast them on the way out
    first_grad = x.grad.clone().double()
    try:
        y.backward()
    except RuntimeError:
        second_raises = True
    else:
        second_raises = False
    x.grad = None
    y = function(x)
    y.backward(retain_graph=True)
    y.backward()
    return first_grad, second_raises, x.grad.double()
