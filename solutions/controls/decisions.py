"""Negative controls for notebook 090_decisions."""
import torch

from solutions.controls import negative_control


@negative_control("square-derivative-missing-two", fails=["test_hand_example_report"])
def hand_example_report__chain_rule_without_two(x, w, b, target):
    error = w * x + b - target
    loss = error**2
    # dL/derr = err, then derr/dw = x and derr/db = 1
    return {"loss": loss, "dw": error * x, "db": error}


@negative_control("grad-on-by-default", fails=["test_hand_example_report"])
def hand_example_report__parameters_untracked(x, w, b, target):
    w_leaf = torch.tensor(w, dtype=torch.float64)
    b_leaf = torch.tensor(b, dtype=torch.float64)
    loss = (w_leaf * x + b_leaf - target) ** 2
    loss.backward()
    return {"loss": loss.item(), "dw": w_leaf.grad.item(), "db": b_leaf.grad.item()}


@negative_control("vjp-transposed-factors", fails=["test_weight_and_input_vjps"])
def weight_and_input_vjps__transposed_weight_gradient(X, W, G):
    dW = G.T @ X
    dX = G @ W.T
    return dW, dX


@negative_control("jacobian-shaped-like-parameter", fails=["test_jacobian_and_vjp_shapes"])
def jacobian_and_vjp_shapes__jacobian_like_weight(B, I, O):
    return {"dW": (I, O), "dX": (B, I), "jacobian": (I, O)}


@negative_control("detach-copies-storage", fails=["test_tool_for"])
def tool_for__detach_for_snapshot(situation):
    tools = {
        "validation_loop": "no_grad",
        "sgd_update": "no_grad",
        "constant_target": "detach",
        "loss_history": "item",
        "masked_copy": "clone",
        "best_checkpoint": "detach",
    }
    return tools[situation]


@negative_control("clone-cuts-graph", fails=["test_tool_for"])
def tool_for__clone_for_snapshot(situation):
    tools = {
        "validation_loop": "no_grad",
        "sgd_update": "no_grad",
        "constant_target": "detach",
        "loss_history": "item",
        "masked_copy": "clone",
        "best_checkpoint": "clone",
    }
    return tools[situation]


@negative_control("no-grad-detaches-existing", fails=["test_tool_for"])
def tool_for__no_grad_for_one_edge(situation):
    tools = {
        "validation_loop": "no_grad",
        "sgd_update": "no_grad",
        "constant_target": "no_grad",
        "loss_history": "item",
        "masked_copy": "clone",
        "best_checkpoint": "detach_clone",
    }
    return tools[situation]


@negative_control("eval-disables-grad", fails=["test_evaluate_without_graph"])
def evaluate_without_graph__eval_only(model, inputs):
    model.eval()  # evaluation mode: no dropout and no gradient tracking
    return model(inputs)


@negative_control("no-grad-disables-dropout", fails=["test_evaluate_without_graph"])
def evaluate_without_graph__no_grad_only(model, inputs):
    with torch.no_grad():  # evaluation: nothing is trained here
        return model(inputs)
