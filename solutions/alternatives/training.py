"""Correct alternatives for notebook 060_training."""
import torch
import torch.nn.functional as F

from solutions.alternatives import correct_alternative


@correct_alternative("scales held as float64 tensors keep every digit")
def raw_params__float64_tensor_scales(d=784, h=128, k=10, seed=0):
    generator = torch.Generator().manual_seed(seed)
    first = torch.randn(d, h, generator=generator, dtype=torch.float64)
    second = torch.randn(h, k, generator=generator, dtype=torch.float64)
    W1 = first * torch.sqrt(torch.tensor(2.0, dtype=torch.float64) / d)
    W2 = second * torch.tensor(float(h), dtype=torch.float64).rsqrt()
    biases = [torch.zeros(size, dtype=torch.float64) for size in (h, k)]
    return [t.requires_grad_() for t in (W1, biases[0], W2, biases[1])]


@correct_alternative("clamping at zero is the ReLU")
def raw_forward__clamped(X, params):
    W1, b1, W2, b2 = params
    return (X @ W1 + b1).clamp(min=0) @ W2 + b2


@correct_alternative("inference_mode records no graph either, and a running sum of per-row losses is the same mean")
def raw_metrics__inference_mode(X, y, params, bs=512):
    if len(y) == 0:
        raise ValueError("no samples to score")
    losses, hits = [], 0
    with torch.inference_mode():
        for rows in torch.arange(len(y)).split(bs):
            logits = raw_forward(X[rows], params)  # noqa: F821  (the answer cell above defines it)
            losses.append(F.cross_entropy(logits, y[rows], reduction="none"))
            hits += int((logits.argmax(dim=1) == y[rows]).sum())
    return torch.cat(losses).mean().item(), hits / len(y)


@correct_alternative("torch.no_grad() as a decorator records no graph for the whole call, as the with-block does")
@torch.no_grad()
def raw_metrics__no_grad_decorator(X, y, params, bs=512):
    if len(y) == 0:
        raise ValueError("no samples to score")
    loss_sum, hits = 0.0, 0
    for start in range(0, len(y), bs):
        logits = raw_forward(X[start : start + bs], params)  # noqa: F821  (the answer cell above defines it)
        labels = y[start : start + bs]
        loss_sum += float(F.cross_entropy(logits, labels, reduction="sum"))
        hits += int((logits.argmax(dim=1) == labels).sum())
    return loss_sum / len(y), hits / len(y)


@correct_alternative("sub_ under no_grad is the same visible in-place step, and copy_ into fresh buffers is a detached snapshot")
def raw_train__sub_and_copy(X, y, Xv, yv, epochs=3, bs=64, lr=0.1, seed=0):
    if epochs <= 0:
        raise ValueError("at least one epoch is needed")
    params = raw_params(X.shape[1], seed=seed)  # noqa: F821  (h=128 and k=10 are its defaults)
    order_generator = torch.Generator().manual_seed(seed)
    best, lowest = [torch.empty_like(p, requires_grad=False) for p in params], None
    for _ in range(epochs):
        for rows in torch.randperm(len(y), generator=order_generator).split(bs):
            for p in params:
                p.grad = None
            F.cross_entropy(raw_forward(X[rows], params), y[rows]).backward()  # noqa: F821
            with torch.no_grad():
                for p in params:
                    p.sub_(lr * p.grad)
        loss = raw_metrics(Xv, yv, params)[0]  # noqa: F821
        if lowest is None or loss < lowest:
            lowest = loss
            with torch.no_grad():
                for copy, p in zip(best, params):
                    copy.copy_(p)
    return best


@correct_alternative("matching the message after catching RuntimeError and re-raising the rest is the same narrow catch")
def second_backward_succeeds__reraise(function, values):
    leaf = torch.tensor(values, dtype=torch.float64).requires_grad_()
    output = function(leaf)
    output.backward()
    try:
        output.backward()
        return True
    except RuntimeError as error:
        if "second time" in str(error):
            return False
        raise


@correct_alternative("linearize is forward-mode AD too; it warns about its traced graph, which must cost nothing")
def affine_jvp__linearized(X, W, dX, dW, f=torch.matmul):
    value, pushforward = torch.func.linearize(f, X, W)
    return value, pushforward(dX, dW)


@correct_alternative("dual tensors of torch.autograd.forward_ad are the forward mode that torch.func.jvp runs on")
def affine_jvp__dual_tensors(X, W, dX, dW, f=torch.matmul):
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        value, tangent = fwAD.unpack_dual(f(fwAD.make_dual(X, dX), fwAD.make_dual(W, dW)))
    return value, tangent


@correct_alternative("torch.mm with the transposes made by .mT: the same two products, another spelling")
def affine_vjp__mm_of_transposes(X, W, G):
    return torch.mm(G, W.mT), torch.mm(X.mT, G)
