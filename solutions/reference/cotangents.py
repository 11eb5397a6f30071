"""Reference answers for notebook 021_cotangents (lesson section 2.1)."""
import math



def vjp(f, x, v):
    """Return the vector-Jacobian product v^T J of `f` at `x`, as a tensor shaped like `x`.

    `x` is a float64 tensor that does not require grad; `f(x)` has the shape of the
    cotangent `v`. Pull `v` back in reverse mode: never build the Jacobian.
    """
    point = x.detach().clone().requires_grad_()
    f(point).backward(v)
    return point.grad


def implicit_seed_allowed(shape):
    """Return True when backward() with no argument works on a real float64 output of `shape`, else False.

    `shape` is a tuple of sizes, any of which may be 0.
    """
    # The implicit seed is a single 1, so it fits exactly one element, whatever the dimensions.
    return math.prod(shape) == 1
