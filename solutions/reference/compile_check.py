"""Reference answers for notebook 075_compile (lesson section 7.5: torch.compile and FlexAttention)."""
import math
import time

import torch


def compare_compiled(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter):
    """Check `compiled_fn` against the eager `fn` on `inputs` and time the compiled calls.

    `inputs` is a tuple of floating tensors (they may require grad); both functions return one
    tensor. Give each function its own fresh leaf copies of the inputs that require grad (new
    memory, no history), backpropagate a cotangent of ones through each output, and compare
    outputs and input gradients with the eager side as the reference, as
    torch.allclose(compiled_value, eager_value, rtol=rtol, atol=atol) does. Call `compiled_fn`
    exactly 1 + `repeats` times: time the first call on its own, then each later call. Read the
    time only from `clock()`, exactly twice per call of `compiled_fn` (just before and just
    after it), and at no other moment.

    Return a dict: "outputs_match" (bool), "grads_match" (bool), "first_call_seconds" (float)
    and "steady_seconds" (float: the mean time of the `repeats` later calls, or NaN when
    `repeats` is 0 and there is nothing to average).
    """
    def fresh_leaves():
        return [t.detach().clone().requires_grad_() for t in inputs]

    def close(actual, expected):
        return actual.shape == expected.shape and torch.allclose(actual, expected, rtol=rtol, atol=atol)

    eager_inputs = fresh_leaves()
    eager_out = fn(*eager_inputs)
    eager_grads = torch.autograd.grad(eager_out, eager_inputs, torch.ones_like(eager_out))

    compiled_inputs = fresh_leaves()
    start = clock()
    compiled_out = compiled_fn(*compiled_inputs)
    first_call = clock() - start
    compiled_grads = torch.autograd.grad(compiled_out, compiled_inputs, torch.ones_like(compiled_out))

    steady = []
    for _ in range(repeats):
        start = clock()
        compiled_fn(*compiled_inputs)
        steady.append(clock() - start)

    return {
        "outputs_match": bool(close(compiled_out, eager_out)),
        "grads_match": all(bool(close(c, e)) for c, e in zip(compiled_grads, eager_grads)),
        "first_call_seconds": first_call,
        "steady_seconds": sum(steady) / repeats if repeats else math.nan,
    }


def check_against_eager(fn, inputs, rtol, atol, compare=None):
    """Compile `fn` with torch.compile and the "aot_eager" backend, then compare it with eager `fn`.

    `compare` is a function with compare_compiled's signature (compare_compiled when None):
    call compare(fn, compiled_fn, inputs, rtol, atol) and return what it returns.
    """
    if compare is None:
        compare = compare_compiled
    compiled_fn = torch.compile(fn, backend="aot_eager")
    return compare(fn, compiled_fn, inputs, rtol, atol)


def causal_score_mod(score, b, h, q_idx, kv_idx):
    """A FlexAttention score_mod for causal attention: keep `score` where kv_idx <= q_idx, else exactly -inf.

    The arguments are tensors (FlexAttention calls it on broadcast index tensors); return a tensor.
    """
    return torch.where(q_idx >= kv_idx, score, -math.inf)


def masked_attention(q, k, v, keep):
    """Attention written out: softmax over keys of q @ k^T / sqrt(E) with masked scores, times v.

    q: (..., L, E), k: (..., S, E), v: (..., S, D); keep: bool (L, S), True where query i may
    look at key j (every query keeps at least one key). A key that `keep` forbids gets a weight
    of exactly zero, however large or small the other scores are. Return a tensor of shape
    (..., L, D).
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~keep, -math.inf)
    return torch.softmax(scores, dim=-1) @ v
