"""Negative controls for notebook 021_cotangents."""
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


@negative_control("vector-backward-without-cotangent", fails=["test_implicit_seed_allowed"])
def implicit_seed_allowed__any_shape(shape):
    # backward() fills in a gradient of ones whatever the output looks like
    return True


@negative_control("scalar-means-zero-dim", fails=["test_implicit_seed_allowed"])
def implicit_seed_allowed__zero_dim_only(shape):
    return len(shape) == 0
