"""Negative controls for notebook 090_decisions."""
import torch

from solutions.controls import negative_control


@negative_control("square-rule-factor-dropped", fails=["test_hand_example_report"])
def hand_example_report__chain_rule_without_two(x, w, b, target):
    error = w * x + b - target
    loss = error**2
    # dL/derr = err, then derr/dw = x and derr/db = 1
    return {"loss": loss, "dw": error * x, "db": error}


@negative_control("numpy-default-dtype", fails=["test_hand_example_report"])
def hand_example_report__default_dtype(x, w, b, target):
    w_leaf = torch.tensor(w, requires_grad=True)
    b_leaf = torch.tensor(b, requires_grad=True)
    loss = (w_leaf * x + b_leaf - target) ** 2
    loss.backward()
    return {"loss": loss.item(), "dw": w_leaf.grad.item(), "db": b_leaf.grad.item()}


@negative_control("grad-on-by-default", fails=["test_hand_example_report"])
def hand_example_report__parameters_untracked(x, w, b, target):
    w_leaf = torch.tensor(w, dtype=torch.float64)
    b_leaf = torch.tensor(b, dtype=torch.float64)
    loss = (w_leaf * x + b_leaf - target) ** 2
    loss.backward()
    return {"loss": loss.item(), "dw": w_leaf.grad.item(), "db": b_leaf.grad.item()}


@negative_control("vjp-transposed-factors", fails=["test_weight_and_input_vjps"])
def weight_and_input_vjps__transposed_weight_gradient(X, W, G):
    dX = G @ W.T
    dW = G.T @ X
    return dX, dW


@negative_control("dense-jacobian-for-vjp", fails=["test_weight_and_input_vjps"])
def weight_and_input_vjps__dense_jacobian(X, W, G):
    # J_X is (B, O, B, I) and J_W is (B, O, I, O): contract the output axes with G.
    J_X, J_W = torch.autograd.functional.jacobian(lambda a, b: a @ b, (X, W))
    return torch.tensordot(G, J_X, dims=2), torch.tensordot(G, J_W, dims=2)


@negative_control("autograd-pays-the-forward-product", fails=["test_weight_and_input_vjps"])
def weight_and_input_vjps__autograd_pullback(X, W, G):
    X, W = X.detach().requires_grad_(), W.detach().requires_grad_()
    (X @ W).backward(G)
    return X.grad, W.grad


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


@negative_control(
    "no-grad-detaches-existing",
    fails=["test_tool_for"],
    hidden_only="the page works through the checkpoint only; which tool fits the other situations is the exercise itself, and a visible check would give the answer away",
)
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


@negative_control("evaluation-without-no-grad", fails=["test_evaluate_without_graph"])
def evaluate_without_graph__detach_afterwards(model, inputs):
    model.eval()
    return model(inputs).detach()  # detached, so the result carries no graph


@negative_control("no-grad-disables-dropout", fails=["test_evaluate_without_graph"])
def evaluate_without_graph__no_grad_only(model, inputs):
    with torch.no_grad():  # evaluation: nothing is trained here
        return model(inputs)


@negative_control("vjp-transposed-factors", fails=["test_jacobian_and_vjp_shapes"])
def jacobian_and_vjp_shapes__weight_gradient_as_gt_x(B, I, O):
    return {"dW": (O, I), "dX": (B, I), "jacobian": (B * O, I * O)}  # (O, I): the shape of G.T @ X


@negative_control(
    "evaluation-without-no-grad",
    fails=["test_tool_for"],
    hidden_only="the visible checks judge only the checkpoint the page works through",
)
def tool_for__item_for_validation(situation):
    tools = {
        "validation_loop": "item",
        "sgd_update": "no_grad",
        "constant_target": "detach",
        "loss_history": "item",
        "masked_copy": "clone",
        "best_checkpoint": "detach_clone",
    }
    return tools[situation]
