"""Correct alternatives for notebook 050_safe_updates."""
import torch

from solutions.alternatives import correct_alternative


@correct_alternative("sub_ with alpha under no_grad is the same in-place step, and the reset happens in a second loop")
def sgd_step__sub_with_alpha(params, lr):
    with torch.no_grad():
        for p in params:
            p.sub_(p.grad, alpha=lr)
    for p in params:
        p.grad = None


@correct_alternative("the reset written out by hand: a new zero tensor of the parameter's shape and dtype counts as zeros")
def optimizer_round__reset_by_hand(optimizer, loss, set_to_none):
    loss.backward()
    params = [p for group in optimizer.param_groups for p in group["params"]]
    had_grad = [p.grad is not None for p in params]
    optimizer.step()
    for p in params:
        if p.grad is not None:
            p.grad = None if set_to_none else torch.zeros_like(p)
    return had_grad


@correct_alternative("summing count-weighted losses and dividing the gradients by N once at the end is the same mean")
def accumulate_grads__divide_at_the_end(params, loss_fn, batches):
    for p in params:
        p.grad = None
    total = 0
    for X, y in batches:
        (loss_fn(X, y) * len(X)).backward()
        total += len(X)
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p.grad /= total
