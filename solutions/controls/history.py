"""Negative controls for notebook 010_history."""
import torch

from solutions.controls import negative_control


@negative_control("numpy-default-dtype", fails=["test_float64_leaf"])
def float64_leaf__default_dtype(values):
    return torch.tensor([float(v) for v in values], requires_grad=True)


@negative_control("grad-on-by-default", fails=["test_float64_leaf"])
def float64_leaf__tracking_assumed(values):
    return torch.tensor(values, dtype=torch.float64)


@negative_control("op-after-requires-grad", fails=["test_float64_leaf"])
def float64_leaf__converted_after_tracking(values):
    return torch.tensor([float(v) for v in values], requires_grad=True).double()


@negative_control("grad-by-formula", fails=["test_square_sum_grad"])
def square_sum_grad__formula(x):
    return 2 * x


@negative_control("grad-by-formula", fails=["test_square_sum_grad"])
def square_sum_grad__assigned_by_hand(x):
    # The right numbers, stored where backward() would put them, without running backward().
    x.grad = 2 * x.detach()
    return x.grad


@negative_control("vector-backward-without-cotangent", fails=["test_square_sum_grad"])
def square_sum_grad__no_reduction(x):
    squares = x * x
    squares.backward()
    return x.grad


@negative_control("grad-on-by-default", fails=["test_gradient_at"])
def gradient_at__tracking_assumed(function, values):
    point = torch.tensor(values, dtype=torch.float64)
    function(point).backward()
    return point.grad


@negative_control("numpy-default-dtype", fails=["test_gradient_at"])
def gradient_at__default_dtype(function, values):
    point = torch.tensor([float(v) for v in values], requires_grad=True)
    function(point).backward()
    return point.grad


@negative_control("autodiff-is-finite-differences", fails=["test_gradient_at"])
def gradient_at__finite_differences(function, values):
    point = torch.tensor(values, dtype=torch.float64)
    step = 1e-6
    gradient = torch.zeros_like(point)
    for index in range(len(values)):
        shift = torch.zeros_like(point)
        shift[index] = step
        gradient[index] = (function(point + shift) - function(point - shift)) / (2 * step)
    return gradient


@negative_control("grad-by-formula", fails=["test_gradient_at"])
def gradient_at__formula(function, values):
    # The derivative of the page's sum of squares, written out: the function is never called.
    return torch.tensor([2.0 * v for v in values], dtype=torch.float64)


@negative_control("cast-restores-precision", fails=["test_float64_leaf"])
def float64_leaf__built_in_float32_then_cast(values):
    # .double() before requires_grad_() keeps it a leaf, and the dtype ends up float64
    return torch.tensor(values, dtype=torch.float32).double().requires_grad_()


@negative_control("cast-restores-precision", fails=["test_gradient_at"])
def gradient_at__float32_point_cast(function, values):
    point = torch.tensor(values, dtype=torch.float32, requires_grad=True)
    function(point).backward()
    return point.grad.double()  # the result is asked for in float64


@negative_control("cast-restores-precision", fails=["test_square_sum_grad"])
def square_sum_grad__squared_in_float32(x):
    # float32 is plenty for a sum of squares, and x.grad comes back as float64 anyway
    single = x.float()
    (single * single).sum().backward()
    return x.grad


@negative_control("cut-path-carries-gradient", fails=["test_square_sum_grad"])
def square_sum_grad__summed_without_recording(x):
    # the forward values are not needed afterwards, so nothing of them is recorded
    with torch.no_grad():
        total = (x * x).sum()
    total.backward()
    return x.grad


@negative_control("cut-path-carries-gradient", fails=["test_square_sum_grad"])
def square_sum_grad__detached_sum_made_a_leaf(x):
    # backward() needs a tensor that requires grad, so the sum is given one
    total = (x.detach() ** 2).sum().requires_grad_()
    total.backward()
    return x.grad
