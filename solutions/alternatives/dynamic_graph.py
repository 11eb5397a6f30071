"""Correct alternatives for notebook 030_dynamic_graph."""
import math

import torch

from solutions.alternatives import correct_alternative


@correct_alternative("the chain rule's factors multiplied in another order give the same numbers up to rounding")
def hand_gradients__factors_reordered(x, y, w, b):
    err = x * w - y + b
    return {
        "loss": err * err,
        "dL_derr": 2.0 * err,
        "derr_dpred": 1,
        "dpred_dw": x,
        "dpred_db": 1,
        "dw": 2.0 * x * err,
        "db": 2.0 * err,
    }


@correct_alternative("math.isclose's rule written out (the larger magnitude times rel_tol, or abs_tol) is the stated rule")
def agrees_with_autograd__stated_rule_by_hand(hand, x, y, w, b):
    claimed = hand(x, y, w, b)
    w_t, b_t = (torch.tensor(float(value), dtype=torch.float64, requires_grad=True) for value in (w, b))
    loss = (w_t * torch.tensor(x, dtype=torch.float64) + b_t - torch.tensor(y, dtype=torch.float64)).pow(2)
    dw, db = torch.autograd.grad(loss, (w_t, b_t))
    for mine, theirs in ((claimed["loss"], loss.item()), (claimed["dw"], dw.item()), (claimed["db"], db.item())):
        if abs(mine - theirs) > max(1e-9 * max(abs(mine), abs(theirs)), 1e-12):
            return False
    return True


@correct_alternative("a loop over the three keys that returns at the first mismatch gives the same verdict")
def agrees_with_autograd__early_return(hand, x, y, w, b):
    claimed = hand(x, y, w, b)
    w_t = torch.tensor([w], dtype=torch.float64, requires_grad=True)
    b_t = torch.tensor([b], dtype=torch.float64, requires_grad=True)
    loss = ((w_t * x + b_t - y) ** 2).sum()
    loss.backward()
    for key, value in (("loss", loss.item()), ("dw", w_t.grad.item()), ("db", b_t.grad.item())):
        if not math.isclose(claimed[key], value, rel_tol=1e-9, abs_tol=1e-12):
            return False
    return True


@correct_alternative("float64 tensors that do not require grad are ordinary arithmetic: autograd records nothing")
def hand_gradients__tensor_arithmetic(x, y, w, b):
    x_t, y_t, w_t, b_t = (torch.tensor(value, dtype=torch.float64) for value in (x, y, w, b))
    err = w_t * x_t + b_t - y_t
    factors = torch.stack([2 * err, torch.ones_like(err), x_t, torch.ones_like(err)])
    dL_derr, derr_dpred, dpred_dw, dpred_db = factors.tolist()
    return {
        "loss": (err * err).item(),
        "dL_derr": dL_derr,
        "derr_dpred": derr_dpred,
        "dpred_dw": dpred_dw,
        "dpred_db": dpred_db,
        "dw": dL_derr * derr_dpred * dpred_dw,
        "db": dL_derr * derr_dpred * dpred_db,
    }


@correct_alternative("the branch chosen by a conditional expression, differentiated by the power rule, is the same")
def predicted_branch_gradient__power_rule(x, threshold):
    return float(3 * x ** (3 - 1) if x > threshold else 2)
