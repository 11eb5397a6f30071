"""Reference answers for notebook 090_decisions (lesson sections 9-11)."""
import torch


def hand_example_report(x, w, b, target):
    """Loss and gradients of the hand example loss = (w * x + b - target) ** 2.

    All four arguments are Python floats; w and b are the parameters.
    Compute in float64 (torch.tensor makes float32 unless told otherwise).
    Return a dict {"loss": ..., "dw": ..., "db": ...} of Python floats.
    """
    w_leaf = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    b_leaf = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    error = w_leaf * x + b_leaf - target
    loss = error**2
    loss.backward()
    return {"loss": loss.item(), "dw": w_leaf.grad.item(), "db": b_leaf.grad.item()}


def weight_and_input_vjps(X, W, G):
    """Pull the upstream gradient G back through Y = X @ W with two matrix products.

    X has shape (B, I), W has shape (I, O), G has shape (B, O).
    Return (dX, dW): the gradients of sum(G * Y) with respect to X and to W,
    in the same order as affine_vjp in notebook 060. Do not build a Jacobian.
    """
    dX = G @ W.T
    dW = X.T @ G
    return dX, dW


def jacobian_and_vjp_shapes(B, I, O):
    """Shapes for Y = X @ W with X of shape (B, I) and W of shape (I, O).

    Return a dict of tuples of ints:
      "dX"       the shape of the input gradient G @ W.T,
      "dW"       the shape of the weight gradient X.T @ G,
      "jacobian" the shape of the Jacobian of Y with respect to W, with Y and W
                 each flattened to a vector (rows follow Y, columns follow W).
    """
    return {"dX": (B, I), "dW": (I, O), "jacobian": (B * O, I * O)}


def tool_for(situation):
    """Name the tool for `situation`, one of the keys listed in the notebook.

    Answer with one of "no_grad", "detach", "item", "clone", "detach_clone".
    """
    tools = {
        "validation_loop": "no_grad",
        "sgd_update": "no_grad",
        "constant_target": "detach",
        "loss_history": "item",
        "masked_copy": "clone",
        "best_checkpoint": "detach_clone",
    }
    return tools[situation]


def evaluate_without_graph(model, inputs):
    """Return model(inputs) computed with evaluation behaviour and without recording a graph.

    Leave the model in evaluation mode.
    """
    model.eval()
    with torch.no_grad():
        return model(inputs)
