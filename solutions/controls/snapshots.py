"""Negative controls for notebook 070_snapshots."""

import torch

from solutions.controls import negative_control


@negative_control("detach-copies-storage", fails=["test_tensor_snapshot"])
def tensor_snapshot__detach_only(tensor):
    return tensor.detach()


@negative_control("clone-cuts-graph", fails=["test_tensor_snapshot"])
def tensor_snapshot__clone_only(tensor):
    return tensor.clone()


@negative_control("numpy-conversion-copies-data", fails=["test_tensor_snapshot"])
def tensor_snapshot__numpy_round_trip(tensor):
    # out to NumPy and back again, believing one of the two steps copies
    return torch.as_tensor(tensor.detach().cpu().numpy())


@negative_control("data-attribute-is-safe", fails=["test_tensor_snapshot"])
def tensor_snapshot__data_attribute(tensor):
    return tensor.data


@negative_control("logged-loss-keeps-graph", fails=["test_descend_and_log"])
def descend_and_log__append_loss_tensor(w, loss_fn, lr, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(w)
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
        losses.append(loss)
    return losses


@negative_control("numpy-conversion-copies-data", fails=["test_numpy_snapshot"])
def numpy_snapshot__shared_host_view(tensor):
    return tensor.detach().cpu().numpy()


@negative_control("numpy-on-tracked-tensor", fails=["test_numpy_snapshot"])
def numpy_snapshot__no_detach(tensor):
    return tensor.cpu().numpy().copy()


@negative_control("index-before-item", fails=["test_one_element_value"])
def one_element_value__index_first(tensor):
    return tensor[0].item()


@negative_control("numpy-holds-every-dtype", fails=["test_one_element_value"])
def one_element_value__through_numpy(tensor):
    # NumPy reads any one-element array as a number
    return float(tensor.detach().numpy().reshape(()))


@negative_control("data-attribute-is-safe", fails=["test_versioned_update"])
def versioned_update__through_data(params, lr):
    for p in params:
        p.data -= lr * p.grad


@negative_control("data-attribute-is-safe", fails=["test_descend_and_log"])
def descend_and_log__update_through_data(w, loss_fn, lr, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(w)
        loss.backward()
        w.data -= lr * w.grad
        w.grad = None
        losses.append(loss.item())
    return losses


@negative_control("backward-overwrites-grad", fails=["test_descend_and_log"])
def descend_and_log__never_cleared(w, loss_fn, lr, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(w)
        loss.backward()  # adds this step's gradient to the earlier ones
        losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
    w.grad = None
    return losses


@negative_control("zero-fill-same-as-none", fails=["test_descend_and_log"])
def descend_and_log__zero_filled(w, loss_fn, lr, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(w)
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = torch.zeros_like(w)
    return losses


@negative_control(
    "results-rounded-for-display",
    fails=["test_one_element_value"],
    hidden_only="the visible checks read 3.0, which has no digits that rounding would drop",
)
def one_element_value__rounded(tensor):
    return round(tensor.item(), 4)


@negative_control("inplace-leaf-in-grad-mode", fails=["test_versioned_update"])
def versioned_update__grad_mode(params, lr):
    for p in params:
        p.add_(p.grad, alpha=-lr)


@negative_control("rebinding-updates-parameter", fails=["test_versioned_update"])
def versioned_update__rebound_name(params, lr):
    with torch.no_grad():
        for p in params:
            p = p - lr * p.grad  # noqa: PLW2901 - the mistake: a new tensor under the old name
            p.requires_grad_()


@negative_control("rebinding-updates-parameter", fails=["test_descend_and_log"])
def descend_and_log__rebound_w(w, loss_fn, lr, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(w)
        (gradient,) = torch.autograd.grad(loss, w)
        losses.append(loss.item())
        w = w.detach() - lr * gradient  # a new tensor: the caller's w never moves
        w.requires_grad_()
    return losses
