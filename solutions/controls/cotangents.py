"""Negative controls for notebook 021_cotangents."""
import torch

from solutions.controls import negative_control


@negative_control("vector-backward-without-cotangent", fails=["test_vjp"])
def vjp__implicit_seed(f, x, v):
    point = x.detach().clone().requires_grad_()
    f(point).backward()
    return point.grad


@negative_control("sum-replaces-cotangent", fails=["test_vjp"])
def vjp__sum_reduction(f, x, v):
    point = x.detach().clone().requires_grad_()
    f(point).sum().backward()
    return point.grad


@negative_control(
    "dense-jacobian-for-vjp",
    fails=["test_vjp"],
    hidden_only="on the page's two-element example a Jacobian is no larger than what an honest backward(v) may use; the page says only a large input tells them apart",
)
def vjp__dense_jacobian(f, x, v):
    # J has shape f(x).shape + x.shape; flatten both sides and multiply by v
    J = torch.autograd.functional.jacobian(f, x)
    return (v.reshape(-1) @ J.reshape(v.numel(), x.numel())).reshape(x.shape)


@negative_control("changes-a-handed-input", fails=["test_vjp"])
def vjp__tracks_the_callers_input(f, x, v):
    # switches tracking on for the caller's own tensor instead of a copy of it
    x.requires_grad_()
    f(x).backward(v)
    return x.grad


@negative_control("vector-backward-without-cotangent", fails=["test_implicit_seed_allowed"])
def implicit_seed_allowed__any_shape(shape):
    # backward() fills in a gradient of ones whatever the output looks like
    return True


@negative_control("scalar-means-zero-dim", fails=["test_implicit_seed_allowed"])
def implicit_seed_allowed__zero_dim_only(shape):
    return len(shape) == 0
