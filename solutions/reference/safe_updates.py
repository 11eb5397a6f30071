"""Reference answers for notebook 050_safe_updates (lesson section 5)."""
import torch


def sgd_step(params, lr):
    """Take one SGD step with learning rate `lr` on the leaves in `params`; return nothing.

    Every parameter already holds a .grad from backward(). After the call each
    one is the same tensor object in the same storage, still a leaf that
    requires grad, holding p - lr * p.grad; its version counter shows the
    change (autograd was not bypassed), and its .grad is None.
    """
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


def optimizer_round(optimizer, loss, set_to_none):
    """Backpropagate `loss`, take one optimizer step, then reset the gradients of the optimizer's parameters.

    Reset them as optimizer.zero_grad(set_to_none=set_to_none) does: an existing
    gradient becomes None (set_to_none True) or all zeros of the parameter's
    shape and dtype (False; zeroing the old tensor or putting a new zero tensor
    in its place are both fine), and a parameter that never had a gradient
    keeps None. Return one bool per
    parameter, in the order of optimizer.param_groups: True when that parameter
    had a gradient (even an all-zero one) when the step ran.
    """
    loss.backward()
    had_grad = [p.grad is not None for group in optimizer.param_groups for p in group["params"]]
    optimizer.step()
    optimizer.zero_grad(set_to_none=set_to_none)
    return had_grad


def accumulate_grads(params, loss_fn, batches):
    """Leave in each parameter's .grad the gradient of the mean loss over all samples in `batches`.

    `batches` is a list of (X, y) microbatches, possibly of different sizes;
    loss_fn(X, y) returns the mean loss over the rows of X at the current
    values of `params`. Whatever .grad held before the call is discarded: a
    parameter that loss_fn does not use ends with .grad None, as after one
    backward() of the full-batch loss on cleared gradients.
    """
    total = sum(len(y) for _, y in batches)
    for p in params:
        p.grad = None
    for X, y in batches:
        share = len(y) / total
        (loss_fn(X, y) * share).backward()
