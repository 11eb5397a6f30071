"""Reference answers for notebook 060_training (lesson section 6, with 6.1 and 6.2)."""
import math

import torch
import torch.nn.functional as F


def raw_params(d=784, h=128, k=10, seed=0):
    """Return [W1, b1, W2, b2] for a d -> h -> k MLP, as float64 leaves that require grad.

    Bring this from notebook 040: W1 (d, h) is drawn first, then W2 (h, k), with
    torch.randn from one torch.Generator().manual_seed(seed); W1 is scaled by
    sqrt(2 / d), W2 by 1 / sqrt(h); both biases start at zero.
    """
    gen = torch.Generator().manual_seed(seed)
    W1 = torch.randn(d, h, generator=gen, dtype=torch.float64) * math.sqrt(2 / d)
    W2 = torch.randn(h, k, generator=gen, dtype=torch.float64) / math.sqrt(h)
    b1 = torch.zeros(h, dtype=torch.float64)
    b2 = torch.zeros(k, dtype=torch.float64)
    return [t.requires_grad_() for t in (W1, b1, W2, b2)]


def raw_forward(X, params):
    """Return the logits relu(X @ W1 + b1) @ W2 + b2, with params = [W1, b1, W2, b2] (from notebook 040)."""
    W1, b1, W2, b2 = params
    return F.relu(X @ W1 + b1) @ W2 + b2


def raw_metrics(X, y, params, bs=512):
    """Return (mean cross entropy, accuracy) of raw_forward on (X, y), as two Python floats.

    Score the rows in consecutive batches of at most `bs` rows without recording
    a graph, and weight every sample equally. Raise ValueError when y is empty.
    """
    if len(y) == 0:
        raise ValueError("cannot evaluate on an empty set")
    total, correct = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(y), bs):
            logits = raw_forward(X[start:start + bs], params)
            labels = y[start:start + bs]
            total += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += (logits.argmax(dim=1) == labels).sum().item()
    return total / len(y), correct / len(y)


def raw_train(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    """Train raw_params(X.shape[1], 128, 10, seed) with plain SGD; return the best epoch's parameters.

    Each epoch visits the rows in the order torch.randperm(len(y), generator=gen),
    where gen = torch.Generator().manual_seed(seed) is made once, in consecutive
    minibatches of `bs` rows: clear the gradients, backpropagate the mean cross
    entropy of raw_forward, update the parameters themselves in place under
    torch.no_grad() (not through .data). After each epoch,
    score (Xv, yv) once with raw_metrics. Return detached copies of the
    parameters of the epoch with the lowest validation loss. Raise ValueError
    when no epoch runs.
    """
    params = raw_params(X.shape[1], 128, 10, seed)
    gen = torch.Generator().manual_seed(seed)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=gen)
        for start in range(0, len(y), bs):
            rows = order[start:start + bs]
            for p in params:
                p.grad = None
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
        val_loss = raw_metrics(Xv, yv, params)[0]
        if val_loss < best_loss:
            best_loss, best = val_loss, [p.detach().clone() for p in params]
    if best is None:
        raise ValueError("raw_train needs at least one epoch")
    return best


def local_mnist_raw(X_train, y_train, X_val, y_val, X_test, y_test):
    """Train on the training arrays, select on the validation arrays, score the test arrays once.

    Each y is one-dimensional, one class index per image. Each X must be 2-D
    with 784 columns and as many rows as its labels; raise
    ValueError otherwise. Convert the images to float64 tensors and the labels
    to int64 tensors. Return (params, (test loss, test accuracy)).
    """
    splits = {"train": (X_train, y_train), "validation": (X_val, y_val), "test": (X_test, y_test)}
    tensors = {}
    for name, (images, labels) in splits.items():
        if images.ndim != 2 or images.shape[1] != 784:
            raise ValueError(f"{name} images must have shape (n, 784), got {tuple(images.shape)}")
        if len(images) != len(labels):
            raise ValueError(f"{name} has {len(images)} images but {len(labels)} labels")
        tensors[name] = (torch.as_tensor(images, dtype=torch.float64), torch.as_tensor(labels, dtype=torch.int64))
    params = raw_train(*tensors["train"], *tensors["validation"])
    return params, raw_metrics(*tensors["test"], params)


def second_backward_succeeds(function, values):
    """Report whether a second backward() through the same output of `function` works.

    Make a float64 leaf from the list `values`, compute y = function(leaf) (a
    one-element tensor), call y.backward(), then try y.backward() again on the
    same y. Return True if the second call works and False if PyTorch refuses
    it because the graph was already freed. Every other error propagates
    unchanged, including other RuntimeErrors (a hook failing during the walk
    raises RuntimeError too, with its own message).
    """
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = function(x)
    y.backward()
    try:
        y.backward()
    except RuntimeError as error:
        if "a second time" not in str(error):
            raise
        return False
    return True


def affine_vjp(X, W, G):
    """Pull the upstream gradient G back through Y = X @ W; return (dX, dW).

    X is (B, I), W is (I, O), G is (B, O). Use two matrix products and never
    build a Jacobian.
    """
    return G @ W.T, X.T @ G


def affine_jacobian_entries(B, I, O):
    """Return the number of entries of the Jacobian of Y = X @ W with respect to W, as an int.

    Y (B, O) and W (I, O) are both flattened to vectors.
    """
    return (B * O) * (I * O)


def affine_jvp(X, W, dX, dW, f=torch.matmul):
    """Push the tangents (dX, dW) forward through Y = f(X, W) with forward-mode AD; return (Y, dY).

    f takes the two matrices and returns a tensor; by default it is the affine map X @ W.
    The checks pass other functions f too, so do not write the derivative by hand.
    """
    return torch.func.jvp(f, (X, W), (dX, dW))
