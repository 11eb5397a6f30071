"""Reference answers for notebook 070_snapshots (lesson section 7: item, detach, clone and data)."""
import torch


def tensor_snapshot(tensor):
    """Return a copy of `tensor` that autograd does not track and that owns its own memory.

    Changing `tensor` in place later must leave the copy as it was.
    """
    return tensor.detach().clone()


def descend_and_log(w, loss_fn, lr, steps):
    """Run `steps` steps of gradient descent, w <- w - lr * (d loss / d w), on the leaf `w`.

    `w` arrives without a gradient (`w.grad is None`); `loss_fn(w)` returns a one-element
    tensor. Change `w` in place, so that it stays the same leaf and autograd sees every change
    (its version counter moves), and keep each update out of the graph. Each step descends along that step's gradient alone, and when you return
    `w.grad` is None. Log each step's loss (its value before that step's update) as a Python
    number or as a tensor that keeps no graph. Return the list of the `steps` logged losses.
    """
    losses = []
    for _ in range(steps):
        loss = loss_fn(w)
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
        losses.append(loss.item())
    return losses


def numpy_snapshot(tensor):
    """Return a NumPy array with the current values of the CPU tensor `tensor` (it may require grad).

    The array must keep these values when `tensor` is changed in place later.
    """
    return tensor.detach().cpu().numpy().copy()


def one_element_value(tensor):
    """Return the value of the one-element floating tensor `tensor`, whatever its shape, as a Python float."""
    return tensor.item()


def versioned_update(params, lr):
    """Apply one gradient-descent step p <- p - lr * p.grad to every leaf p in `params`, in place.

    The update must not be recorded by autograd, and autograd must still see that the values
    changed (a graph that saved the old values must refuse to run backward). Leave every
    `p.grad` as it was: here resetting the gradients is the caller's job. Return None.
    """
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
