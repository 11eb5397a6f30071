"""Reference answers for notebook 021_cotangents (lesson section 2.1)."""
import torch


def vjp(f, x, v):
    """Return the vector-Jacobian product v^T J of `f` at `x`, as a tensor shaped like `x`.

    `x` is a float64 tensor that does not require grad; `f(x)` has the shape of the
    cotangent `v`. Pass `v` to backward(): do not build the Jacobian.
    """
    point = x.detach().clone().requires_grad_()
    f(point).backward(v)
    return point.grad


def implicit_seed_allowed(shape):
    """Return True when backward() with no argument works on a real output of `shape`, else False."""
    leaf = torch.ones(shape, dtype=torch.float64, requires_grad=True)
    try:
        (2 * leaf).backward()
    except RuntimeError:
        return False
    return True
