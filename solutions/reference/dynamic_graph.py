"""Reference answers for notebook 030_dynamic_graph (lesson section 3)."""
import math

import torch


def hand_gradients(x, y, w, b):
    """Differentiate loss = (w*x + b - y)**2 by hand (no autograd) at the given numbers.

    Return a dict of floats with the keys "loss", "dL_derr", "derr_dpred",
    "dpred_dw", "dpred_db", "dw" and "db".
    """
    err = w * x + b - y
    dL_derr = 2 * err
    derr_dpred = 1.0
    dpred_dw = x
    dpred_db = 1.0
    return {
        "loss": float(err**2),
        "dL_derr": float(dL_derr),
        "derr_dpred": derr_dpred,
        "dpred_dw": float(dpred_dw),
        "dpred_db": dpred_db,
        "dw": float(dL_derr * derr_dpred * dpred_dw),
        "db": float(dL_derr * derr_dpred * dpred_db),
    }


def agrees_with_autograd(hand, x, y, w, b):
    """Return True when hand(x, y, w, b) reports the "loss", "dw" and "db" that autograd finds.

    `hand` works like hand_gradients. Compute in float64 and count two numbers
    as equal when math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) holds.
    """
    claimed = hand(x, y, w, b)
    x_t = torch.tensor(x, dtype=torch.float64)
    y_t = torch.tensor(y, dtype=torch.float64)
    w_t = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    b_t = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    loss = (w_t * x_t + b_t - y_t) ** 2
    loss.backward()
    found = {"loss": loss.item(), "dw": w_t.grad.item(), "db": b_t.grad.item()}
    return all(math.isclose(claimed[key], found[key], rel_tol=1e-9, abs_tol=1e-12) for key in found)


def predicted_branch_gradient(x, threshold):
    """Predict, without running autograd, the gradient autograd reports for jump_at at `x`.

    Return a float.
    """
    if x > threshold:
        return 3.0 * x**2
    return 2.0
