"""Negative controls for notebook 040_raw_mlp."""
import math

import torch
import torch.nn.functional as F

from solutions.controls import negative_control


@negative_control("op-after-requires-grad", fails=["test_raw_params"])
def raw_params__scaled_after_tracking(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    W1 = torch.randn(d, h, generator=gen, dtype=torch.float64, requires_grad=True) * math.sqrt(2 / d)
    W2 = torch.randn(h, k, generator=gen, dtype=torch.float64, requires_grad=True) / math.sqrt(h)
    b1 = torch.zeros(h, dtype=torch.float64, requires_grad=True)
    b2 = torch.zeros(k, dtype=torch.float64, requires_grad=True)
    return [W1, b1, W2, b2]


@negative_control("init-scale-wrong-rule", fails=["test_raw_params"])
def raw_params__small_constant_scale(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    W1 = (torch.randn(d, h, generator=gen, dtype=torch.float64) * 0.01).requires_grad_()
    W2 = (torch.randn(h, k, generator=gen, dtype=torch.float64) * 0.01).requires_grad_()
    b1 = torch.zeros(h, dtype=torch.float64, requires_grad=True)
    b2 = torch.zeros(k, dtype=torch.float64, requires_grad=True)
    return [W1, b1, W2, b2]


@negative_control("init-scale-wrong-rule", fails=["test_raw_params"])
def raw_params__divided_by_fan_in(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    W1 = (torch.randn(d, h, generator=gen, dtype=torch.float64) / d).requires_grad_()
    W2 = (torch.randn(h, k, generator=gen, dtype=torch.float64) / h).requires_grad_()
    b1 = torch.zeros(h, dtype=torch.float64, requires_grad=True)
    b2 = torch.zeros(k, dtype=torch.float64, requires_grad=True)
    return [W1, b1, W2, b2]


@negative_control("init-scale-wrong-rule", fails=["test_raw_params"])
def raw_params__he_for_both_layers(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    W1 = (torch.randn(d, h, generator=gen, dtype=torch.float64) * math.sqrt(2 / d)).requires_grad_()
    W2 = (torch.randn(h, k, generator=gen, dtype=torch.float64) * math.sqrt(2 / h)).requires_grad_()
    b1 = torch.zeros(h, dtype=torch.float64, requires_grad=True)
    b2 = torch.zeros(k, dtype=torch.float64, requires_grad=True)
    return [W1, b1, W2, b2]


@negative_control("numpy-default-dtype", fails=["test_raw_params"])
def raw_params__default_dtype(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    W1 = (torch.randn(d, h, generator=gen) * math.sqrt(2 / d)).requires_grad_()
    W2 = (torch.randn(h, k, generator=gen) / math.sqrt(h)).requires_grad_()
    b1 = torch.zeros(h, requires_grad=True)
    b2 = torch.zeros(k, requires_grad=True)
    return [W1, b1, W2, b2]


@negative_control("cast-restores-precision", fails=["test_raw_params"])
def raw_params__float32_scale(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    # the scales as tensors; torch.tensor of a Python float is float32, the product still reads float64
    W1 = torch.randn(d, h, generator=gen, dtype=torch.float64) * torch.sqrt(torch.tensor(2 / d))
    W2 = torch.randn(h, k, generator=gen, dtype=torch.float64) / torch.sqrt(torch.tensor(float(h)))
    b1 = torch.zeros(h, dtype=torch.float64)
    b2 = torch.zeros(k, dtype=torch.float64)
    return [t.requires_grad_() for t in (W1, b1, W2, b2)]


@negative_control("grad-on-by-default", fails=["test_raw_params"])
def raw_params__tracking_assumed(d=784, h=128, k=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    W1 = torch.randn(d, h, generator=gen, dtype=torch.float64) * math.sqrt(2 / d)
    W2 = torch.randn(h, k, generator=gen, dtype=torch.float64) / math.sqrt(h)
    return [W1, torch.zeros(h, dtype=torch.float64), W2, torch.zeros(k, dtype=torch.float64)]


@negative_control("relu-on-output-logits", fails=["test_raw_forward"])
def raw_forward__relu_after_every_layer(X, params):
    W1, b1, W2, b2 = params
    hidden = F.relu(X @ W1 + b1)
    return F.relu(hidden @ W2 + b2)


@negative_control("softmax-before-cross-entropy", fails=["test_raw_forward"])
def raw_forward__probabilities(X, params):
    W1, b1, W2, b2 = params
    scores = F.relu(X @ W1 + b1) @ W2 + b2
    return scores.exp() / scores.exp().sum(dim=1, keepdim=True)  # the loss is meant to get probabilities


@negative_control("numpy-default-dtype", fails=["test_raw_forward"])
def raw_forward__float32(X, params):
    # MNIST pixels are float32, so compute in float32
    W1, b1, W2, b2 = (p.float() for p in params)
    hidden = F.relu(X.float() @ W1 + b1)
    return hidden @ W2 + b2


@negative_control("softmax-before-cross-entropy", fails=["test_raw_loss"])
def raw_loss__probabilities_as_logits(logits, y):
    probabilities = F.softmax(logits, dim=1)
    return F.cross_entropy(probabilities, torch.as_tensor(y, dtype=torch.int64))


@negative_control("cross-entropy-label-dtype", fails=["test_raw_loss"])
def raw_loss__float_labels(logits, y):
    labels = torch.as_tensor(y, dtype=logits.dtype)
    return F.cross_entropy(logits, labels)


@negative_control("cross-entropy-label-dtype", fails=["test_raw_loss"])
def raw_loss__int32_labels(logits, y):
    labels = torch.as_tensor(y).int()
    return F.cross_entropy(logits, labels)


@negative_control("labels-index-in-any-dtype", fails=["test_raw_loss"])
def raw_loss__byte_labels_as_index(logits, y):
    # PyTorch indexes with "long, int, byte or bool tensors": convert only the other kinds
    labels = torch.as_tensor(y)
    if labels.dtype not in (torch.int64, torch.int32, torch.uint8, torch.int8):
        labels = labels.to(torch.int64)
    picked = F.log_softmax(logits, dim=1)[torch.arange(len(labels)), labels]
    return -picked.mean()


@negative_control("numpy-default-dtype", fails=["test_raw_loss"])
def raw_loss__float32(logits, y):
    labels = torch.as_tensor(y).to(torch.int64)
    return F.cross_entropy(logits.float(), labels)


@negative_control("cast-restores-precision", fails=["test_raw_loss"])
def raw_loss__float32_then_cast(logits, y):
    # float32 is faster; cast back so the dtype still reads float64
    labels = torch.as_tensor(y).to(torch.int64)
    return F.cross_entropy(logits.float(), labels).double()
