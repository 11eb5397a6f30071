"""Reference answers for notebook 040_raw_mlp (lesson section 4)."""
import math

import torch
import torch.nn.functional as F


def raw_params(d=784, h=128, k=10, seed=0):
    """Return [W1, b1, W2, b2] for a d -> h -> k MLP, as float64 leaves that require grad.

    Draw W1 (d, h) and then W2 (h, k) with torch.randn from one
    torch.Generator().manual_seed(seed); scale W1 by sqrt(2 / d) and W2 by
    1 / sqrt(h); the biases b1 (h,) and b2 (k,) start at zero.
    """
    gen = torch.Generator().manual_seed(seed)
    W1 = torch.randn(d, h, generator=gen, dtype=torch.float64) * math.sqrt(2 / d)
    W2 = torch.randn(h, k, generator=gen, dtype=torch.float64) / math.sqrt(h)
    b1 = torch.zeros(h, dtype=torch.float64)
    b2 = torch.zeros(k, dtype=torch.float64)
    return [t.requires_grad_() for t in (W1, b1, W2, b2)]


def raw_forward(X, params):
    """Return the logits relu(X @ W1 + b1) @ W2 + b2 for the rows of X, with params = [W1, b1, W2, b2]."""
    W1, b1, W2, b2 = params
    hidden = F.relu(X @ W1 + b1)
    return hidden @ W2 + b2


def raw_loss(logits, y):
    """Return the mean cross entropy of `logits` (N, C) against the class labels `y`.

    `y` holds N class indices, as a Python list of ints or as a tensor of any
    integer dtype. The result is a scalar tensor that autograd can take back
    to `logits`.
    """
    labels = torch.as_tensor(y).to(torch.int64)
    return F.cross_entropy(logits, labels)
