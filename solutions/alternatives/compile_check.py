"""Correct alternatives for notebook 075_compile."""
import math
import time

import torch

from solutions.alternatives import correct_alternative


@correct_alternative("backward() into the .grad of separate fresh leaves, and the tolerance written out instead of torch.allclose")
def compare_compiled__backward_and_written_tolerance(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter):
    def run(function, timed):
        leaves = [torch.tensor(t.tolist(), dtype=t.dtype, requires_grad=True) for t in inputs]
        before = clock() if timed else None
        out = function(*leaves)
        seconds = clock() - before if timed else None
        out.backward(torch.ones_like(out))
        return out.detach(), [leaf.grad for leaf in leaves], leaves, seconds

    def within(compiled, eager):
        if compiled.shape != eager.shape:
            return False
        return bool(((compiled - eager).abs() <= atol + rtol * eager.abs()).all())

    eager_out, eager_grads, _, _ = run(fn, timed=False)
    compiled_out, compiled_grads, leaves, first_call = run(compiled_fn, timed=True)
    later = []
    for _ in range(repeats):
        before = clock()
        compiled_fn(*leaves)
        later.append(clock() - before)
    return {
        "outputs_match": within(compiled_out, eager_out),
        "grads_match": all(within(c, e) for c, e in zip(compiled_grads, eager_grads)),
        "first_call_seconds": float(first_call),
        "steady_seconds": float(sum(later) / len(later)) if later else float("nan"),
    }


@correct_alternative("adding -inf where the key is later and 0 elsewhere leaves the kept scores exact and the others -inf")
def causal_score_mod__add_minus_infinity(score, b, h, q_idx, kv_idx):
    return score + torch.where(kv_idx > q_idx, -math.inf, 0.0)


@correct_alternative("the lowest finite float of the dtype is below every real score, so its weight is still exactly zero")
def masked_attention__lowest_finite_score(q, k, v, keep):
    scores = (q @ k.mT) / q.shape[-1] ** 0.5
    scores = scores.masked_fill(keep.logical_not(), torch.finfo(scores.dtype).min)
    return scores.softmax(-1) @ v
