"""Negative controls for notebook 060_training."""

import math

import torch
import torch.nn.functional as F

from solutions.controls import negative_control


@negative_control("op-after-requires-grad", fails=["test_training_raw_model"])
def raw_params__scaled_after_tracking(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    W1 = torch.randn(d, h, generator=gen, dtype=torch.float64, requires_grad=True) * math.sqrt(2 / d)
    W2 = torch.randn(h, k, generator=gen, dtype=torch.float64, requires_grad=True) / math.sqrt(h)
    b1 = torch.zeros(h, dtype=torch.float64, requires_grad=True)
    b2 = torch.zeros(k, dtype=torch.float64, requires_grad=True)
    return [W1, b1, W2, b2]


@negative_control("cast-restores-precision", fails=["test_training_raw_model"])
def raw_params__float32_scale(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    # the scales as tensors; torch.tensor of a Python float is float32, the product still reads float64
    W1 = torch.randn(d, h, generator=gen, dtype=torch.float64) * torch.sqrt(torch.tensor(2 / d))
    W2 = torch.randn(h, k, generator=gen, dtype=torch.float64) / torch.sqrt(torch.tensor(float(h)))
    b1 = torch.zeros(h, dtype=torch.float64)
    b2 = torch.zeros(k, dtype=torch.float64)
    return [t.requires_grad_() for t in (W1, b1, W2, b2)]


@negative_control("softmax-before-cross-entropy", fails=["test_training_raw_model"])
def raw_forward__probabilities(X, params):
    W1, b1, W2, b2 = params
    return torch.softmax(F.relu(X @ W1 + b1) @ W2 + b2, dim=1)  # the loss is meant to get probabilities


@negative_control("evaluation-without-no-grad", fails=["test_raw_metrics"])
def raw_metrics__grad_mode(X, y, params, bs=512):
    if len(y) == 0:
        raise ValueError("cannot evaluate on an empty set")
    total, correct = 0.0, 0
    for start in range(0, len(y), bs):
        logits = raw_forward(X[start : start + bs], params)  # noqa: F821  (defined in the notebook)
        labels = y[start : start + bs]
        total += F.cross_entropy(logits, labels, reduction="sum").item()
        correct += (logits.argmax(dim=1) == labels).sum().item()
    return total / len(y), correct / len(y)


@negative_control("equal-weight-microbatch-means", fails=["test_raw_metrics"])
def raw_metrics__mean_of_batch_means(X, y, params, bs=512):
    if len(y) == 0:
        raise ValueError("cannot evaluate on an empty set")
    batch_losses = []
    total_correct = 0
    with torch.no_grad():
        for start in range(0, len(y), bs):
            logits = raw_forward(X[start : start + bs], params)  # noqa: F821
            labels = y[start : start + bs]
            batch_losses.append(F.cross_entropy(logits, labels))  # each batch's mean, all weighted alike
            total_correct += (logits.argmax(dim=1) == labels).sum().item()
    return torch.stack(batch_losses).mean().item(), total_correct / len(y)


@negative_control("backward-overwrites-grad", fails=["test_raw_train"])
def raw_train__never_resets(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    params = raw_params(X.shape[1], 128, 10, seed)  # noqa: F821
    gen = torch.Generator().manual_seed(seed)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), bs):
            rows = order[start : start + bs]
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()  # noqa: F821
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        val_loss = raw_metrics(Xv, yv, params)[0]  # noqa: F821
        if val_loss < best_loss:
            best_loss, best = val_loss, [p.detach().clone() for p in params]
    if best is None:
        raise ValueError("raw_train needs at least one epoch")
    return best


@negative_control("selection-on-wrong-split", fails=["test_raw_train"])
def raw_train__selects_by_training_loss(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    params = raw_params(X.shape[1], 128, 10, seed)  # noqa: F821
    gen = torch.Generator().manual_seed(seed)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), bs):
            rows = order[start : start + bs]
            for p in params:
                p.grad = None
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()  # noqa: F821
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        train_loss = raw_metrics(X, y, params)[0]  # noqa: F821
        if train_loss < best_loss:
            best_loss, best = train_loss, [p.detach().clone() for p in params]
    if best is None:
        raise ValueError("raw_train needs at least one epoch")
    return best


@negative_control("selection-on-wrong-split", fails=["test_raw_train"])
def raw_train__keeps_lowest_epoch_mean_loss(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    params = raw_params(X.shape[1], 128, 10, seed)  # noqa: F821
    gen = torch.Generator().manual_seed(seed)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        step_losses = []
        for start in range(0, len(y), bs):
            rows = order[start : start + bs]
            for p in params:
                p.grad = None
            loss = F.cross_entropy(raw_forward(X[rows], params), y[rows])  # noqa: F821
            loss.backward()
            step_losses.append(loss.item())
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        raw_metrics(Xv, yv, params)  # noqa: F821  (scored as asked, then the training loss decides)
        epoch_loss = sum(step_losses) / len(step_losses)
        if epoch_loss < best_loss:
            best_loss, best = epoch_loss, [p.detach().clone() for p in params]
    if best is None:
        raise ValueError("raw_train needs at least one epoch")
    return best


@negative_control("best-params-by-reference", fails=["test_raw_train"])
def raw_train__keeps_live_params(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    params = raw_params(X.shape[1], 128, 10, seed)  # noqa: F821
    gen = torch.Generator().manual_seed(seed)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), bs):
            rows = order[start : start + bs]
            for p in params:
                p.grad = None
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()  # noqa: F821
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        val_loss = raw_metrics(Xv, yv, params)[0]  # noqa: F821
        if val_loss < best_loss:
            best_loss, best = val_loss, params
    if best is None:
        raise ValueError("raw_train needs at least one epoch")
    return best


@negative_control("detach-copies-storage", fails=["test_raw_train"])
def raw_train__detached_not_cloned(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    params = raw_params(X.shape[1], 128, 10, seed)  # noqa: F821
    gen = torch.Generator().manual_seed(seed)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), bs):
            rows = order[start : start + bs]
            for p in params:
                p.grad = None
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()  # noqa: F821
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        val_loss = raw_metrics(Xv, yv, params)[0]  # noqa: F821
        if val_loss < best_loss:
            best_loss, best = val_loss, [p.detach() for p in params]
    if best is None:
        raise ValueError("raw_train needs at least one epoch")
    return best


@negative_control("clone-cuts-graph", fails=["test_raw_train"])
def raw_train__cloned_not_detached(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    params = raw_params(X.shape[1], 128, 10, seed)  # noqa: F821
    gen = torch.Generator().manual_seed(seed)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), bs):
            rows = order[start : start + bs]
            for p in params:
                p.grad = None
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()  # noqa: F821
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        val_loss = raw_metrics(Xv, yv, params)[0]  # noqa: F821
        if val_loss < best_loss:
            best_loss, best = val_loss, [p.clone() for p in params]  # a copy, so later steps cannot touch it
    if best is None:
        raise ValueError("raw_train needs at least one epoch")
    return best


@negative_control("last-epoch-is-best", fails=["test_raw_train"])
def raw_train__keeps_last_epoch(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    if epochs < 1:
        raise ValueError("raw_train needs at least one epoch")
    params = raw_params(X.shape[1], 128, 10, seed)  # noqa: F821
    gen = torch.Generator().manual_seed(seed)
    history = []
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), bs):
            rows = order[start : start + bs]
            for p in params:
                p.grad = None
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()  # noqa: F821
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        history.append(raw_metrics(Xv, yv, params)[0])  # noqa: F821  (watched; training only improves the model)
    return [p.detach().clone() for p in params]


@negative_control("data-attribute-is-safe", fails=["test_raw_train"])
def raw_train__updates_through_data(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    params = raw_params(X.shape[1], 128, 10, seed)  # noqa: F821
    gen = torch.Generator().manual_seed(seed)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), bs):
            rows = order[start : start + bs]
            for p in params:
                p.grad = None
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()  # noqa: F821
            for p in params:
                p.data -= lr * p.grad  # .data needs no torch.no_grad()
        val_loss = raw_metrics(Xv, yv, params)[0]  # noqa: F821
        if val_loss < best_loss:
            best_loss, best = val_loss, [p.detach().clone() for p in params]
    if best is None:
        raise ValueError("raw_train needs at least one epoch")
    return best


@negative_control("selection-on-wrong-split", fails=["test_local_mnist_raw"])
def local_mnist_raw__selects_on_test(X_train, y_train, X_val, y_val, X_test, y_test):
    splits = {"train": (X_train, y_train), "validation": (X_val, y_val), "test": (X_test, y_test)}
    tensors = {}
    for name, (images, labels) in splits.items():
        if images.ndim != 2 or images.shape[1] != 784:
            raise ValueError(f"{name} images must have shape (n, 784), got {tuple(images.shape)}")
        if len(images) != len(labels):
            raise ValueError(f"{name} has {len(images)} images but {len(labels)} labels")
        tensors[name] = (torch.as_tensor(images, dtype=torch.float64), torch.as_tensor(labels, dtype=torch.int64))
    params = raw_train(*tensors["train"], *tensors["test"])  # noqa: F821
    return params, raw_metrics(*tensors["test"], params)  # noqa: F821


@negative_control("assert-for-input-validation", fails=["test_local_mnist_raw"])
def local_mnist_raw__asserts_shapes(X_train, y_train, X_val, y_val, X_test, y_test):
    tensors = []
    for images, labels in ((X_train, y_train), (X_val, y_val), (X_test, y_test)):
        assert images.ndim == 2 and images.shape[1] == 784 and len(images) == len(labels)
        tensors += [torch.as_tensor(images, dtype=torch.float64), torch.as_tensor(labels, dtype=torch.int64)]
    params = raw_train(*tensors[:4])  # noqa: F821
    return params, raw_metrics(*tensors[4:], params)  # noqa: F821


@negative_control("cross-entropy-label-dtype", fails=["test_local_mnist_raw"])
def local_mnist_raw__labels_as_floats(X_train, y_train, X_val, y_val, X_test, y_test):
    pairs = ((X_train, y_train), (X_val, y_val), (X_test, y_test))
    for images, labels in pairs:
        if images.ndim != 2 or images.shape[1] != 784 or len(images) != len(labels):
            raise ValueError("each image array must have shape (n, 784), with n labels")
    # every array as float64, the labels too
    train, val, test = ((torch.as_tensor(x).double(), torch.as_tensor(y).double()) for x, y in pairs)
    params = raw_train(*train, *val)  # noqa: F821
    return params, raw_metrics(*test, params)  # noqa: F821


@negative_control("numpy-default-dtype", fails=["test_local_mnist_raw"])
def local_mnist_raw__default_float_images(X_train, y_train, X_val, y_val, X_test, y_test):
    splits = []
    for images, labels in ((X_train, y_train), (X_val, y_val), (X_test, y_test)):
        if images.ndim != 2 or images.shape[1] != 784 or len(images) != len(labels):
            raise ValueError("each image array must have shape (n, 784), with n labels")
        splits.append((torch.tensor(images.tolist()), torch.as_tensor(labels, dtype=torch.int64)))  # float32
    params = raw_train(*splits[0], *splits[1])  # noqa: F821
    return params, raw_metrics(*splits[2], params)  # noqa: F821


@negative_control("graph-survives-backward", fails=["test_second_backward_succeeds"])
def second_backward_succeeds__grad_fn_still_there(function, values):
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    # The output still has its grad_fn, so the graph is still there to walk.
    return y.grad_fn is not None


@negative_control("second-backward-always-raises", fails=["test_second_backward_succeeds"])
def second_backward_succeeds__always_refused(function, values):
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    # backward() frees the graph, so a second call can never work.
    return False


@negative_control("broad-except-hides-errors", fails=["test_second_backward_succeeds"])
def second_backward_succeeds__catches_every_runtime_error(function, values):
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    try:
        y.backward()
    except RuntimeError:
        return False
    return True


@negative_control("dense-jacobian-for-vjp", fails=["test_affine_vjp"])
def affine_vjp__dense_jacobian(X, W, G):
    # J_X has shape (B, O, B, I) and J_W shape (B, O, I, O); contract their first two axes with G.
    J_X, J_W = torch.autograd.functional.jacobian(lambda a, b: a @ b, (X, W))
    return torch.tensordot(G, J_X, dims=2), torch.tensordot(G, J_W, dims=2)


@negative_control("autograd-pays-the-forward-product", fails=["test_affine_vjp"])
def affine_vjp__autograd_pullback(X, W, G):
    X, W = X.detach().requires_grad_(), W.detach().requires_grad_()
    dX, dW = torch.autograd.grad(X @ W, (X, W), G)
    return dX, dW


@negative_control("vjp-transposed-factors", fails=["test_affine_vjp"])
def affine_vjp__weight_factors_swapped(X, W, G):
    return G @ W.T, (X.T @ G).T  # the transpose of the weight gradient, as G.T @ X gives it


@negative_control("jacobian-shaped-like-parameter", fails=["test_affine_jacobian_entries"])
def affine_jacobian_entries__shape_of_weight(B, I, O):
    return I * O


@negative_control("jvp-one-tangent-only", fails=["test_affine_jvp"])
def affine_jvp__input_tangent_only(X, W, dX, dW, f=torch.matmul):
    return torch.func.jvp(lambda a: f(a, W), (X,), (dX,))


@negative_control("jvp-by-hand-formula", fails=["test_affine_jvp"])
def affine_jvp__product_rule_by_hand(X, W, dX, dW, f=torch.matmul):
    # Product rule: perturb X and W together, keep the first-order terms.
    return f(X, W), dX @ W + X @ dW


@negative_control("jvp-by-reverse-mode", fails=["test_affine_jvp"])
def affine_jvp__functional_double_backward(X, W, dX, dW, f=torch.matmul):
    # torch.autograd.functional.jvp has the signature of a JVP, so it must be forward mode
    return torch.autograd.functional.jvp(f, (X, W), (dX, dW))


@negative_control("autodiff-is-finite-differences", fails=["test_affine_jvp"])
def affine_jvp__central_difference(X, W, dX, dW, f=torch.matmul):
    step = 1e-5  # small enough, the student reckons, to be the derivative
    ahead, behind = f(X + step * dX, W + step * dW), f(X - step * dX, W - step * dW)
    return f(X, W), (ahead - behind) / (2 * step)
