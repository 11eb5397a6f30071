"""Negative controls for notebook 030_dynamic_graph."""
import math

import torch

from solutions.controls import negative_control


@negative_control("hard-coded-hand-numbers", fails=["test_hand_gradients"])
def hand_gradients__lesson_numbers(x, y, w, b):
    return {
        "loss": 4.0,
        "dL_derr": 4.0,
        "derr_dpred": 1.0,
        "dpred_dw": 2.0,
        "dpred_db": 1.0,
        "dw": 8.0,
        "db": 4.0,
    }


@negative_control("square-rule-factor-dropped", fails=["test_hand_gradients"])
def hand_gradients__square_factor_dropped(x, y, w, b):
    err = w * x + b - y
    dL_derr = err
    return {
        "loss": float(err**2),
        "dL_derr": float(dL_derr),
        "derr_dpred": 1.0,
        "dpred_dw": float(x),
        "dpred_db": 1.0,
        "dw": float(dL_derr * x),
        "db": float(dL_derr),
    }


@negative_control(
    "results-rounded-for-display",
    fails=["test_hand_gradients"],
    hidden_only="the page's numbers (4.84, 8.8, 4.4) have few digits, which rounding keeps; only other numbers show the loss",
)
def hand_gradients__rounded_for_display(x, y, w, b):
    err = w * x + b - y
    found = {"loss": err**2, "dL_derr": 2 * err, "derr_dpred": 1.0, "dpred_dw": x, "dpred_db": 1.0}
    found |= {"dw": found["dL_derr"] * x, "db": found["dL_derr"]}
    # four decimals are plenty: the worked example has at most two
    return {key: round(float(value), 4) for key, value in found.items()}


@negative_control("numpy-default-dtype", fails=["test_hand_gradients"])
def hand_gradients__default_dtype_arithmetic(x, y, w, b):
    # tensors make the arithmetic look like the graph drawn above; float() hands back plain numbers
    x, y, w, b = torch.tensor([x, y, w, b]).unbind()
    err = w * x + b - y
    found = {"loss": err**2, "dL_derr": 2 * err, "dpred_dw": x, "dw": 2 * err * x, "db": 2 * err}
    return {"derr_dpred": 1.0, "dpred_db": 1.0} | {key: float(value) for key, value in found.items()}


@negative_control("numpy-default-dtype", fails=["test_hand_gradients"])
def hand_gradients__default_dtype_tensors(x, y, w, b):
    err = torch.tensor(w * x + b - y)
    return {"loss": err**2, "dL_derr": 2 * err, "derr_dpred": 1.0, "dpred_dw": torch.tensor(x), "dpred_db": 1.0,
            "dw": 2 * err * x, "db": 2 * err}


@negative_control("grad-on-by-default", fails=["test_agrees_with_autograd"])
def agrees_with_autograd__tracking_assumed(hand, x, y, w, b):
    claimed = hand(x, y, w, b)
    x_t = torch.tensor(x, dtype=torch.float64)
    y_t = torch.tensor(y, dtype=torch.float64)
    w_t = torch.tensor(w, dtype=torch.float64)
    b_t = torch.tensor(b, dtype=torch.float64)
    loss = (w_t * x_t + b_t - y_t) ** 2
    loss.backward()
    found = {"loss": loss.item(), "dw": w_t.grad.item(), "db": b_t.grad.item()}
    return all(math.isclose(claimed[key], found[key], rel_tol=1e-9, abs_tol=1e-12) for key in found)


@negative_control("numpy-default-dtype", fails=["test_agrees_with_autograd"])
def agrees_with_autograd__default_dtype(hand, x, y, w, b):
    claimed = hand(x, y, w, b)
    w_t = torch.tensor(w, requires_grad=True)
    b_t = torch.tensor(b, requires_grad=True)
    loss = (w_t * torch.tensor(x) + b_t - torch.tensor(y)) ** 2
    loss.backward()
    found = {"loss": loss.item(), "dw": w_t.grad.item(), "db": b_t.grad.item()}
    return all(math.isclose(claimed[key], found[key], rel_tol=1e-9, abs_tol=1e-12) for key in found)


@negative_control("checks-loss-not-gradients", fails=["test_agrees_with_autograd"])
def agrees_with_autograd__loss_only(hand, x, y, w, b):
    w_t = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    b_t = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    loss = (w_t * x + b_t - y) ** 2
    loss.backward()
    return math.isclose(hand(x, y, w, b)["loss"], loss.item(), rel_tol=1e-9, abs_tol=1e-12)


@negative_control("unexecuted-branch-differentiated", fails=["test_predicted_branch_gradient"])
def predicted_branch_gradient__first_branch(x, threshold):
    # autograd differentiates the function's formula, t**3
    return 3.0 * x**2


@negative_control("branch-condition-differentiated", fails=["test_predicted_branch_gradient"])
def predicted_branch_gradient__jump_undefined(x, threshold):
    if x == threshold:
        return float("nan")  # the function jumps here, so it has no derivative
    if x > threshold:
        return 3.0 * x**2
    return 2.0


@negative_control("branch-gradient-unpredictable", fails=["test_predicted_branch_gradient"])
def predicted_branch_gradient__runs_autograd(x, threshold):
    # the safest prediction is the one autograd itself gives
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    jump_at(t, threshold).backward()  # noqa: F821 (defined in the notebook's setup cell)
    return t.grad.item()


@negative_control("autograd-replaces-chain-rule", fails=["test_hand_gradients"])
def hand_gradients__read_from_backward(x, y, w, b):
    # autograd applies the chain rule exactly, so its numbers are the hand derivation
    w_t = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    b_t = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    err = w_t * x + b_t - y
    loss = err**2
    loss.backward()
    return {
        "loss": loss.item(),
        "dL_derr": 2 * err.item(),
        "derr_dpred": 1.0,
        "dpred_dw": float(x),
        "dpred_db": 1.0,
        "dw": w_t.grad.item(),
        "db": b_t.grad.item(),
    }


@negative_control(
    "isclose-rules-interchangeable",
    fails=["test_agrees_with_autograd"],
    hidden_only="the page's points and derivations lie far from the tolerance bound, where torch.isclose and math.isclose agree; they part only at boundary probes the page does not show",
)
def agrees_with_autograd__torch_isclose(hand, x, y, w, b):
    claimed = hand(x, y, w, b)
    w_t, b_t = (torch.tensor(float(value), dtype=torch.float64, requires_grad=True) for value in (w, b))
    loss = (w_t * torch.tensor(x, dtype=torch.float64) + b_t - torch.tensor(y, dtype=torch.float64)).pow(2)
    dw, db = torch.autograd.grad(loss, (w_t, b_t))
    found = torch.stack([loss.detach(), dw, db])
    wanted = torch.tensor([claimed["loss"], claimed["dw"], claimed["db"]], dtype=torch.float64)
    # torch's isclose takes the same rtol and atol, so it checks the same tolerance
    return bool(torch.isclose(wanted, found, rtol=1e-9, atol=1e-12).all())


@negative_control(
    "isclose-rules-interchangeable",
    fails=["test_agrees_with_autograd"],
    hidden_only="the page's points and derivations lie far from the tolerance bound, where torch.isclose and math.isclose agree; they part only at boundary probes the page does not show",
)
def agrees_with_autograd__torch_isclose_found_first(hand, x, y, w, b):
    claimed = hand(x, y, w, b)
    w_t = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    b_t = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    loss = (w_t * x + b_t - y) ** 2
    loss.backward()
    found = torch.stack([loss.detach(), w_t.grad, b_t.grad])
    wanted = torch.tensor([claimed["loss"], claimed["dw"], claimed["db"]], dtype=torch.float64)
    return bool(torch.isclose(found, wanted, rtol=1e-9, atol=1e-12).all())


@negative_control("autograd-replaces-chain-rule", fails=["test_hand_gradients"])
def hand_gradients__forward_mode_duals(x, y, w, b):
    # no backward() and no grad(): forward mode pushes a tangent, which is still the chain rule done for me
    import torch.autograd.forward_ad as fwAD

    def loss_and_tangent(w_tangent, b_tangent):
        with fwAD.dual_level():
            w_dual = fwAD.make_dual(torch.tensor(w, dtype=torch.float64), torch.tensor(w_tangent, dtype=torch.float64))
            b_dual = fwAD.make_dual(torch.tensor(b, dtype=torch.float64), torch.tensor(b_tangent, dtype=torch.float64))
            loss, tangent = fwAD.unpack_dual((w_dual * x + b_dual - y) ** 2)
            return loss.item(), tangent.item()

    loss, dw = loss_and_tangent(1.0, 0.0)
    _, db = loss_and_tangent(0.0, 1.0)
    return {
        "loss": loss,
        "dL_derr": db,
        "derr_dpred": 1.0,
        "dpred_dw": float(x),
        "dpred_db": 1.0,
        "dw": dw,
        "db": db,
    }


@negative_control("autograd-replaces-chain-rule", fails=["test_hand_gradients"])
def hand_gradients__functional_jacobian(x, y, w, b):
    # torch.autograd.functional is a library of derivatives, not the backward() the exercise forbids
    point = (torch.tensor(w, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
    dw, db = torch.autograd.functional.jacobian(lambda w_t, b_t: (w_t * x + b_t - y) ** 2, point)
    err = w * x + b - y
    return {
        "loss": float(err**2),
        "dL_derr": db.item(),
        "derr_dpred": 1.0,
        "dpred_dw": float(x),
        "dpred_db": 1.0,
        "dw": dw.item(),
        "db": db.item(),
    }


@negative_control("branch-gradient-unpredictable", fails=["test_predicted_branch_gradient"])
def predicted_branch_gradient__func_grad_of_a_copy(x, threshold):
    # jump_at is off limits, so differentiate a copy of it with torch.func instead of backward()
    def copy_of_jump_at(t):
        return t**3 if t > threshold else 2 * t + 7

    return torch.func.grad(copy_of_jump_at)(torch.tensor(x, dtype=torch.float64)).item()


@negative_control("branch-gradient-unpredictable", fails=["test_predicted_branch_gradient"])
def predicted_branch_gradient__forward_tangent(x, threshold):
    # no backward pass at all: push a unit tangent through a copy of jump_at in forward mode
    def copy_of_jump_at(t):
        return t**3 if t > threshold else 2 * t + 7

    one = torch.tensor(1.0, dtype=torch.float64)
    return torch.func.jvp(copy_of_jump_at, (torch.tensor(x, dtype=torch.float64),), (one,))[1].item()
