"""Correct alternatives for notebook 040_raw_mlp."""
import math

import torch
import torch.nn.functional as F

from solutions.alternatives import correct_alternative


@correct_alternative("zeros are exact in float32, so casting fresh zero biases to float64 loses nothing")
def raw_params__biases_cast_and_scale_divided(d=784, h=128, k=10, seed=0):
    generator = torch.Generator().manual_seed(seed)
    W1 = torch.randn(d, h, generator=generator, dtype=torch.float64) / math.sqrt(d / 2)
    W2 = torch.randn(h, k, generator=generator, dtype=torch.float64) * h ** -0.5
    b1 = torch.zeros(h).double()
    b2 = torch.zeros(k).double()
    for parameter in (W1, b1, W2, b2):
        parameter.requires_grad = True
    return [W1, b1, W2, b2]


@correct_alternative("clamping at zero is the ReLU, and addmm is the same affine layer in float64")
def raw_forward__clamp_and_addmm(X, params):
    W1, b1, W2, b2 = params
    hidden = (X @ W1 + b1).clamp(min=0)
    return torch.addmm(b2, hidden, W2)


@correct_alternative("log-softmax and picking each row's label is the same mean cross entropy; "
                     "torch.tensor on a tensor warns but copies the labels correctly")
def raw_loss__log_softmax_by_hand(logits, y):
    labels = torch.tensor(y).long()
    picked = F.log_softmax(logits, dim=1)[torch.arange(len(labels)), labels]
    return -picked.mean()
