"""Autograd refused while an answer works by hand or in forward mode (autograd_checks.refusing_autograd)."""

import pytest
import torch
import torch.autograd.forward_ad as fwAD
from conftest import load_checks_module
from torch.autograd.forward_ad import dual_level as dual_level_bound_early
from torch.autograd.forward_ad import make_dual as make_dual_bound_early
from torch.autograd.functional import jvp as functional_jvp_bound_early
from torch.func import grad as func_grad_bound_early

pytestmark = pytest.mark.unit

checks = load_checks_module()

POINT = torch.tensor(3.0, dtype=torch.float64)
ONE = torch.ones((), dtype=torch.float64)


def square_loss(w):
    return (w * 2.0 + 1.0 - 5.0) ** 2  # at w = 3 its first and second derivatives are both 8


def _tensor_backward():
    w = POINT.clone().requires_grad_()
    square_loss(w).backward()
    return w.grad


def _autograd_grad():
    w = POINT.clone().requires_grad_()
    return torch.autograd.grad(square_loss(w), w)[0]


def _engine_bound_early():
    from torch.autograd.graph import _engine_run_backward

    w = POINT.clone().requires_grad_()
    return _engine_run_backward((square_loss(w),), (ONE,), False, False, (w,), False, False)[0]


def _dual_tensors():
    with fwAD.dual_level():
        return fwAD.unpack_dual(square_loss(fwAD.make_dual(POINT, ONE))).tangent


def _dual_tensors_bound_early():
    with dual_level_bound_early():
        return fwAD.unpack_dual(square_loss(make_dual_bound_early(POINT, ONE))).tangent


REVERSE_ROUTES = {
    "Tensor.backward": _tensor_backward,
    "torch.autograd.grad": _autograd_grad,
    "the engine call, bound early": _engine_bound_early,
    "functional.jacobian": lambda: torch.autograd.functional.jacobian(square_loss, POINT),
    "functional.hessian": lambda: torch.autograd.functional.hessian(square_loss, POINT),
    "functional.vjp": lambda: torch.autograd.functional.vjp(square_loss, POINT)[1],
    "functional.jvp (double backward)": lambda: torch.autograd.functional.jvp(square_loss, (POINT,), (ONE,))[1],
    "functional.jvp, bound early": lambda: functional_jvp_bound_early(square_loss, (POINT,), (ONE,))[1],
    "func.grad": lambda: torch.func.grad(square_loss)(POINT),
    "func.grad, bound early": lambda: func_grad_bound_early(square_loss)(POINT),
    "func.vjp": lambda: torch.func.vjp(square_loss, POINT)[1](ONE)[0],
    "func.jacrev": lambda: torch.func.jacrev(square_loss)(POINT),
    "func.hessian": lambda: torch.func.hessian(square_loss)(POINT),
}
FORWARD_ROUTES = {
    "dual tensors": _dual_tensors,
    "dual tensors, bound early": _dual_tensors_bound_early,
    "func.jvp": lambda: torch.func.jvp(square_loss, (POINT,), (ONE,))[1],
    "func.jacfwd": lambda: torch.func.jacfwd(square_loss)(POINT),
    "func.linearize": lambda: torch.func.linearize(square_loss, POINT)[1](ONE),
    "functional.jacobian in forward mode": lambda: torch.autograd.functional.jacobian(
        square_loss, POINT, strategy="forward-mode", vectorize=True
    ),
}


def _originals():
    return {route: checks.route_slot(route) for modes in checks.AUTOGRAD_ROUTES.values() for route in modes}


def test_every_route_names_something_this_torch_has():
    for route, (owner, name) in _originals().items():
        assert name in vars(owner), route


@pytest.mark.parametrize("route", sorted({**REVERSE_ROUTES, **FORWARD_ROUTES}))
def test_every_route_is_refused_and_noted_when_both_modes_are(route):
    compute = {**REVERSE_ROUTES, **FORWARD_ROUTES}[route]
    assert compute().item() == pytest.approx(8.0)
    with checks.refusing_autograd() as refused:
        with pytest.raises(checks.StandInCalled):
            compute()
    assert refused and all(note.startswith("torch.") for note in refused)
    assert checks.refused_autograd_calls(refused, route) == refused
    assert compute().item() == pytest.approx(8.0)  # restored


@pytest.mark.parametrize("route", sorted(FORWARD_ROUTES))
def test_refusing_reverse_mode_lets_forward_mode_through(route):
    with checks.refusing_autograd(modes=(checks.REVERSE_MODE,)) as refused:
        tangent = FORWARD_ROUTES[route]()
    assert refused == [] and tangent.item() == 8.0


@pytest.mark.parametrize("route", sorted(REVERSE_ROUTES))
def test_refusing_reverse_mode_refuses_every_reverse_route(route):
    with checks.refusing_autograd(modes=(checks.REVERSE_MODE,)) as refused:
        with pytest.raises(checks.StandInCalled):
            REVERSE_ROUTES[route]()
    assert len(refused) == 1


def test_everything_is_restored_when_the_block_raises():
    before = {route: vars(owner)[name] for route, (owner, name) in _originals().items()}
    with pytest.raises(ZeroDivisionError):
        with checks.refusing_autograd():
            1 / 0
    assert {route: vars(owner)[name] for route, (owner, name) in _originals().items()} == before


def test_a_refusal_the_answer_swallowed_is_still_noted():
    def catches_the_refusal():
        try:
            return torch.func.jvp(square_loss, (POINT,), (ONE,))[1].item()
        except Exception:
            return 8.0

    with checks.refusing_autograd() as refused:
        assert checks.call_answer(catches_the_refusal) == 8.0
    assert checks.refused_autograd_calls(refused, "catches_the_refusal()") == ["torch.func.jvp"]


def test_the_refusal_is_blamed_in_the_students_terms():
    with pytest.raises(checks.Diagnosis, match=r"^\[misconception: jvp-by-reverse-mode\] reverse mode ran"):
        with (
            checks.blaming_stand_ins("reverse mode ran", "jvp-by-reverse-mode"),
            checks.refusing_autograd(modes=(checks.REVERSE_MODE,)),
        ):
            checks.call_answer(REVERSE_ROUTES["functional.jvp (double backward)"])


def test_a_stand_in_written_over_is_a_forgery_and_still_restored():
    real_grad = torch.autograd.grad

    def puts_grad_back():
        torch.autograd.grad = real_grad

    with checks.refusing_autograd() as refused:
        puts_grad_back()
    assert torch.autograd.grad is real_grad
    assert refused == [checks.WRITTEN_OVER + "torch.autograd.grad"]
    with pytest.raises(checks.Forgery, match="written over"):
        checks.refused_autograd_calls(refused, "puts_grad_back()")
