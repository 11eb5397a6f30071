"""Negative controls for notebook 050_safe_updates."""
import torch

from solutions.controls import negative_control


@negative_control("inplace-leaf-in-grad-mode", fails=["test_sgd_step"])
def sgd_step__update_in_grad_mode(params, lr):
    for p in params:
        p -= lr * p.grad
        p.grad = None


@negative_control("rebinding-updates-parameter", fails=["test_sgd_step"])
def sgd_step__rebinds_name(params, lr):
    for p in params:
        p = p - lr * p.grad
        p.grad = None


@negative_control("backward-overwrites-grad", fails=["test_sgd_step"])
def sgd_step__never_resets(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad


@negative_control("zero-fill-same-as-none", fails=["test_sgd_step"])
def sgd_step__zero_filled(params, lr):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad.zero_()


@negative_control("data-attribute-is-safe", fails=["test_sgd_step"])
def sgd_step__through_data(params, lr):
    for p in params:
        p.data -= lr * p.grad
        p.grad = None


@negative_control("data-attribute-is-safe", fails=["test_sgd_step"])
def sgd_step__assigns_data(params, lr):
    for p in params:
        p.data = p.data - lr * p.grad
        p.grad = None


@negative_control("zero-fill-same-as-none", fails=["test_optimizer_round"])
def optimizer_round__zeroes_regardless(optimizer, loss, set_to_none):
    loss.backward()
    had_grad = [p.grad is not None for group in optimizer.param_groups for p in group["params"]]
    optimizer.step()
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                p.grad.zero_()
    return had_grad


@negative_control("zero-fill-same-as-none", fails=["test_optimizer_round"])
def optimizer_round__flag_ignored(optimizer, loss, set_to_none):
    loss.backward()
    had_grad = [p.grad is not None for group in optimizer.param_groups for p in group["params"]]
    optimizer.step()
    optimizer.zero_grad()
    return had_grad


@negative_control("backward-overwrites-grad", fails=["test_optimizer_round"])
def optimizer_round__never_resets(optimizer, loss, set_to_none):
    loss.backward()
    had_grad = [p.grad is not None for group in optimizer.param_groups for p in group["params"]]
    optimizer.step()
    return had_grad


@negative_control("equal-weight-microbatch-means", fails=["test_accumulate_grads"])
def accumulate_grads__equal_weights(params, loss_fn, batches):
    for p in params:
        p.grad = None
    for X, y in batches:
        (loss_fn(X, y) / len(batches)).backward()


@negative_control("accumulated-grad-unscaled", fails=["test_accumulate_grads"])
def accumulate_grads__no_division(params, loss_fn, batches):
    for p in params:
        p.grad = None
    for X, y in batches:
        loss_fn(X, y).backward()


@negative_control("stale-grad-after-update", fails=["test_accumulate_grads"])
def accumulate_grads__keeps_old_grads(params, loss_fn, batches):
    total = sum(len(y) for _, y in batches)
    for X, y in batches:
        (loss_fn(X, y) * (len(y) / total)).backward()


@negative_control("microbatches-merged-into-one", fails=["test_accumulate_grads"])
def accumulate_grads__one_big_batch(params, loss_fn, batches):
    for p in params:
        p.grad = None
    X = torch.cat([X for X, _ in batches])
    y = torch.cat([y for _, y in batches])
    loss_fn(X, y).backward()


@negative_control("microbatches-merged-into-one", fails=["test_accumulate_grads"])
def accumulate_grads__summed_losses(params, loss_fn, batches):
    total = sum(len(y) for _, y in batches)
    for p in params:
        p.grad = None
    loss = sum(loss_fn(X, y) * (len(y) / total) for X, y in batches)
    loss.backward()


@negative_control("zero-fill-same-as-none", fails=["test_accumulate_grads"])
def accumulate_grads__zeroed_in_place(params, loss_fn, batches):
    total = sum(len(y) for _, y in batches)
    for p in params:
        if p.grad is not None:
            p.grad.zero_()
    for X, y in batches:
        (loss_fn(X, y) * (len(y) / total)).backward()
