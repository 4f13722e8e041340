"""torch.optim.adadelta: Adadelta, step sizes from running averages of squared
gradients and squared updates.

Per parameter, with g its gradient (negated when maximizing):

    g = g + weight_decay * p                          (if weight_decay != 0)
    v = rho * v + (1 - rho) * g * g                   (``square_avg``)
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta * delta           (``acc_delta``)
    p = p - lr * delta

PyTorch's single-tensor loop, op for op; ``foreach=True`` runs the same loop.
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (_CAPTURABLE_DEVICES, Optimizer, _check_capturable_devices,
                        _check_non_negative, _check_state_steps, _check_tensor_lr,
                        _get_scalar_dtype, _to_scalar, _use_grad_for_differentiable)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Implements the Adadelta algorithm."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False) -> None:
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_non_negative(eps=eps, weight_decay=weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"foreach": None, "maximize": False,
                                          "differentiable": False, "capturable": False})
        self._restore_step_tensors()

    def _init_group(self, group, params_with_grad, grads, square_avgs, acc_deltas,
                    state_steps) -> bool:
        has_complex = self._gather_params_with_grad(group, params_with_grad, grads,
                                                    "Adadelta does not support sparse gradients")
        for p in params_with_grad:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.zeros((), dtype=_get_scalar_dtype())
                state["square_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["acc_delta"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads, square_avgs, acc_deltas, state_steps = [], [], [], [], []
            has_complex = self._init_group(group, params_with_grad, grads, square_avgs,
                                           acc_deltas, state_steps)
            adadelta(params_with_grad, grads, square_avgs, acc_deltas, state_steps,
                     lr=group["lr"], rho=group["rho"], eps=group["eps"],
                     weight_decay=group["weight_decay"], foreach=group["foreach"],
                     maximize=group["maximize"], differentiable=group["differentiable"],
                     capturable=group["capturable"], has_complex=has_complex)
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize) -> None:
    """Functional Adadelta (see :class:`Adadelta`); ``foreach`` runs the single-tensor loop."""
    _check_state_steps(state_steps)
    if capturable:   # all parameters are checked before any update (XLA has no support)
        for p, step in zip(params, state_steps, strict=True):
            _check_capturable_devices(p, step, devices=[d for d in _CAPTURABLE_DEVICES
                                                        if d != "xla"])
    lr = _to_scalar(lr)
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas,
                                                        state_steps, strict=True):
        step += 1
        grad = grad if not maximize else -grad

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        if torch.is_complex(param):   # complex numbers update as pairs of reals
            square_avg = torch.view_as_real(square_avg)
            acc_delta = torch.view_as_real(acc_delta)
            grad = torch.view_as_real(grad)

        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)

        if torch.is_complex(param):
            delta = torch.view_as_complex(delta)
        param.add_(delta, alpha=-lr)
