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
