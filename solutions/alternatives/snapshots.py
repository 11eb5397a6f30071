"""Correct alternatives for notebook 070_snapshots."""
import torch

from solutions.alternatives import correct_alternative


@correct_alternative("cloning first and detaching the clone gives the same untracked copy with its own memory")
def tensor_snapshot__clone_then_detach(tensor):
    return tensor.clone().detach()


@correct_alternative("gradients from torch.autograd.grad never land in w.grad, float(loss) logs a number (and warns), sub_ steps in place")
def descend_and_log__grad_function_and_float(w, loss_fn, lr, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(w)
        (gradient,) = torch.autograd.grad(loss, w)
        losses.append(float(loss))  # warns that loss requires grad; the number is still right
        with torch.no_grad():
            w.sub_(lr * gradient)
    return losses


@correct_alternative("zeroing the gradient before each backward, then dropping it at the end, keeps each step's gradient its own")
def descend_and_log__zero_then_drop(w, loss_fn, lr, steps):
    losses = []
    for _ in range(steps):
        if w.grad is not None:
            w.grad.zero_()
        loss = loss_fn(w)
        loss.backward()
        losses.append(loss.detach())
        with torch.no_grad():
            w.add_(w.grad, alpha=-lr)
    w.grad = None
    return losses


@correct_alternative("np.array copies the detached tensor's values (NumPy 2 warns about the copy keyword)")
def numpy_snapshot__array_of_detached(tensor):
    import numpy as np  # the answer cell is all a submission has: it imports what it uses

    return np.array(tensor.detach())


@correct_alternative("sub_ under no_grad moves the version counter just like -=")
def versioned_update__sub_in_place(params, lr):
    for p in params:
        with torch.no_grad():
            p.sub_(lr * p.grad)
