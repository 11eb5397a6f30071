"""Correct alternatives for notebook 021_cotangents."""
import math

import torch

from solutions.alternatives import correct_alternative


@correct_alternative("torch.autograd.grad with grad_outputs=v pulls v back just as backward(v) does")
def vjp__autograd_grad(f, x, v):
    point = x.clone().requires_grad_(True)
    (pulled_back,) = torch.autograd.grad(f(point), point, grad_outputs=v)
    return pulled_back


@correct_alternative("torch.autograd.backward with grad_tensors=v is the function behind y.backward(v)")
def vjp__backward_function(f, x, v):
    point = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    torch.autograd.backward(f(point), grad_tensors=v)
    return point.grad


@correct_alternative("counting elements answers without building anything: exactly one is required")
def implicit_seed_allowed__counts_elements(shape):
    return math.prod(shape) == 1


@correct_alternative("trying it on a float32 output gives the same answer: the rule depends only on the element count")
def implicit_seed_allowed__tries_float32(shape):
    leaf = torch.zeros(shape, requires_grad=True)
    try:
        leaf.exp().backward()
        return True
    except RuntimeError:
        return False
