"""Negative controls for notebook 075_compile."""
import math
import time

import torch

from solutions.controls import negative_control


@negative_control("compiled-matches-exactly", fails=["test_compare_compiled"])
def compare_compiled__exact_equality(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter):
    eager_inputs = [t.detach().clone().requires_grad_() for t in inputs]
    eager_out = fn(*eager_inputs)
    eager_grads = torch.autograd.grad(eager_out, eager_inputs, torch.ones_like(eager_out))

    compiled_inputs = [t.detach().clone().requires_grad_() for t in inputs]
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
        "outputs_match": torch.equal(compiled_out, eager_out),
        "grads_match": all(torch.equal(c, e) for c, e in zip(compiled_grads, eager_grads)),
        "first_call_seconds": first_call,
        "steady_seconds": sum(steady) / repeats if repeats else math.nan,
    }


@negative_control("float64-copies-for-comparison", fails=["test_compare_compiled"])
def compare_compiled__float64_copies(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter):
    # every check of the course compares in float64, so both sides run on float64 copies
    eager_inputs = [t.detach().clone().double().requires_grad_() for t in inputs]
    eager_out = fn(*eager_inputs)
    eager_grads = torch.autograd.grad(eager_out, eager_inputs, torch.ones_like(eager_out))

    compiled_inputs = [t.detach().clone().double().requires_grad_() for t in inputs]
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
        "outputs_match": bool(torch.allclose(compiled_out, eager_out, rtol=rtol, atol=atol)),
        "grads_match": all(bool(torch.allclose(c, e, rtol=rtol, atol=atol)) for c, e in zip(compiled_grads, eager_grads)),
        "first_call_seconds": first_call,
        "steady_seconds": sum(steady) / repeats if repeats else math.nan,
    }


@negative_control("first-call-in-timing", fails=["test_compare_compiled"])
def compare_compiled__first_call_in_average(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter):
    eager_inputs = [t.detach().clone().requires_grad_() for t in inputs]
    eager_out = fn(*eager_inputs)
    eager_grads = torch.autograd.grad(eager_out, eager_inputs, torch.ones_like(eager_out))

    compiled_inputs = [t.detach().clone().requires_grad_() for t in inputs]
    times = []
    for _ in range(1 + repeats):
        start = clock()
        compiled_out = compiled_fn(*compiled_inputs)
        times.append(clock() - start)
    compiled_grads = torch.autograd.grad(compiled_out, compiled_inputs, torch.ones_like(compiled_out))

    return {
        "outputs_match": torch.allclose(compiled_out, eager_out, rtol=rtol, atol=atol),
        "grads_match": all(torch.allclose(c, e, rtol=rtol, atol=atol) for c, e in zip(compiled_grads, eager_grads)),
        "first_call_seconds": times[0],
        "steady_seconds": sum(times) / len(times),
    }


@negative_control("steady-time-summed", fails=["test_compare_compiled"])
def compare_compiled__steady_total(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter):
    eager_inputs = [t.detach().clone().requires_grad_() for t in inputs]
    eager_out = fn(*eager_inputs)
    eager_grads = torch.autograd.grad(eager_out, eager_inputs, torch.ones_like(eager_out))

    compiled_inputs = [t.detach().clone().requires_grad_() for t in inputs]
    start = clock()
    compiled_out = compiled_fn(*compiled_inputs)
    first_call = clock() - start
    compiled_grads = torch.autograd.grad(compiled_out, compiled_inputs, torch.ones_like(compiled_out))

    start = clock()
    for _ in range(repeats):
        compiled_fn(*compiled_inputs)
    steady = clock() - start  # the steady-state time of the later calls

    return {
        "outputs_match": torch.allclose(compiled_out, eager_out, rtol=rtol, atol=atol),
        "grads_match": all(torch.allclose(c, e, rtol=rtol, atol=atol) for c, e in zip(compiled_grads, eager_grads)),
        "first_call_seconds": first_call,
        "steady_seconds": steady,
    }


@negative_control("backward-overwrites-grad", fails=["test_compare_compiled"])
def compare_compiled__shared_leaves(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter):
    leaves = [t.detach().clone().requires_grad_() for t in inputs]
    eager_out = fn(*leaves)
    eager_out.backward(torch.ones_like(eager_out))
    eager_grads = [leaf.grad.clone() for leaf in leaves]

    start = clock()
    compiled_out = compiled_fn(*leaves)
    first_call = clock() - start
    compiled_out.backward(torch.ones_like(compiled_out))  # backward writes the new gradients into .grad
    compiled_grads = [leaf.grad for leaf in leaves]

    steady = []
    for _ in range(repeats):
        start = clock()
        compiled_fn(*leaves)
        steady.append(clock() - start)

    return {
        "outputs_match": torch.allclose(compiled_out, eager_out, rtol=rtol, atol=atol),
        "grads_match": all(torch.allclose(c, e, rtol=rtol, atol=atol) for c, e in zip(compiled_grads, eager_grads)),
        "first_call_seconds": first_call,
        "steady_seconds": sum(steady) / repeats if repeats else math.nan,
    }


@negative_control("outputs-imply-gradients", fails=["test_compare_compiled"])
def compare_compiled__outputs_only(fn, compiled_fn, inputs, rtol, atol, repeats=3, clock=time.perf_counter):
    eager_out = fn(*inputs)
    start = clock()
    compiled_out = compiled_fn(*inputs)
    first_call = clock() - start

    steady = []
    for _ in range(repeats):
        start = clock()
        compiled_fn(*inputs)
        steady.append(clock() - start)

    outputs_match = torch.allclose(compiled_out, eager_out, rtol=rtol, atol=atol)
    return {
        "outputs_match": outputs_match,
        "grads_match": outputs_match,
        "first_call_seconds": first_call,
        "steady_seconds": sum(steady) / repeats if repeats else math.nan,
    }


@negative_control("compile-default-backend-cheap", fails=["test_check_against_eager"])
def check_against_eager__default_backend(fn, inputs, rtol, atol, compare=None):
    if compare is None:
        compare = compare_compiled
    compiled_fn = torch.compile(fn)
    return compare(fn, compiled_fn, inputs, rtol, atol)


@negative_control("zero-score-masks-key", fails=["test_causal_score_mod"])
def causal_score_mod__zero_score(score, b, h, q_idx, kv_idx):
    return score * (q_idx >= kv_idx)


@negative_control("python-branch-in-score-mod", fails=["test_causal_score_mod"])
def causal_score_mod__python_if(score, b, h, q_idx, kv_idx):
    if q_idx >= kv_idx:
        return score
    return torch.full_like(score, -math.inf)


@negative_control("zero-score-masks-key", fails=["test_masked_attention"])
def masked_attention__zero_scores(q, k, v, keep):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~keep, 0.0)
    return torch.softmax(scores, dim=-1) @ v


@negative_control("attention-mask-inverted", fails=["test_masked_attention"])
def masked_attention__mask_inverted(q, k, v, keep):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(keep, -math.inf)  # blank out the masked positions
    return torch.softmax(scores, dim=-1) @ v


@negative_control("mask-after-softmax", fails=["test_masked_attention"])
def masked_attention__mask_after_softmax(q, k, v, keep):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1) * keep
    return weights @ v


@negative_control("large-negative-masks-key", fails=["test_causal_score_mod"])
def causal_score_mod__large_negative(score, b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, score, -1e9)


@negative_control("large-negative-masks-key", fails=["test_masked_attention"])
def masked_attention__large_negative(q, k, v, keep):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~keep, -1e9)
    return torch.softmax(scores, dim=-1) @ v
