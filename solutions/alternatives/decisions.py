"""Correct alternatives for notebook 090_decisions."""
import torch

from solutions.alternatives import correct_alternative


@correct_alternative("torch.autograd.grad on float64 leaves made with as_tensor returns the same two gradients without touching .grad")
def hand_example_report__grad_function(x, w, b, target):
    w_leaf = torch.as_tensor(w, dtype=torch.float64).requires_grad_()
    b_leaf = torch.as_tensor(b, dtype=torch.float64).requires_grad_()
    loss = (w_leaf * x + b_leaf - target) ** 2
    dw, db = torch.autograd.grad(loss, (w_leaf, b_leaf))
    return {"loss": float(loss.detach()), "dw": float(dw), "db": float(db)}


@correct_alternative("the same choices reached by asking which property each situation needs, one question at a time")
def tool_for__by_property(situation):
    whole_region_untracked = {"validation_loop", "sgd_update"}
    if situation in whole_region_untracked:
        return "no_grad"
    if situation == "loss_history":
        return "item"
    needs_own_memory = situation in {"masked_copy", "best_checkpoint"}
    keeps_history = situation == "masked_copy"
    if needs_own_memory:
        return "clone" if keeps_history else "detach_clone"
    return "detach"


@correct_alternative("einsum spells each gradient as one contraction, which runs as one matrix product apiece")
def weight_and_input_vjps__einsum(X, W, G):
    dX = torch.einsum("bo,io->bi", G, W)
    dW = torch.einsum("bi,bo->io", X, G)
    return dX, dW
