"""torch.optim.rmsprop: RMSprop, optionally centered and with momentum.

Per parameter, with g its gradient (negated when maximizing):

    g = g + weight_decay * p                          (if weight_decay != 0)
    v = alpha * v + (1 - alpha) * g * g               running mean of squares
    centered: a = lerp(a, g, 1 - alpha);  avg = sqrt(v - a * a) + eps
    else:     avg = sqrt(v) + eps
    momentum: b = momentum * b + g / avg;  p = p - lr * b
    else:     p = p - lr * g / avg
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (Optimizer, _check_capturable_devices, _check_non_negative,
                        _check_state_steps, _check_tensor_lr, _get_scalar_dtype, _to_scalar,
                        _use_grad_for_differentiable)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """Implements the RMSprop algorithm."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False) -> None:
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                            alpha=alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"momentum": 0, "centered": False, "foreach": None,
                                          "maximize": False, "differentiable": False,
                                          "capturable": False})
        self._restore_step_tensors()

    def _init_group(self, group, params_with_grad, grads, square_avgs, momentum_buffer_list,
                    grad_avgs, state_steps) -> bool:
        has_complex = self._gather_params_with_grad(group, params_with_grad, grads,
                                                    "RMSprop does not support sparse gradients")
        for p in params_with_grad:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = (
                    torch.zeros((), dtype=_get_scalar_dtype(), device=p.device)
                    if group["capturable"] else torch.zeros((), dtype=_get_scalar_dtype()))
                state["square_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = torch.zeros_like(
                        p, memory_format=torch.preserve_format)
                if group["centered"]:
                    state["grad_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            square_avgs.append(state["square_avg"])
            state_steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffer_list.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads, square_avgs, grad_avgs = [], [], [], []
            momentum_buffer_list, state_steps = [], []
            has_complex = self._init_group(group, params_with_grad, grads, square_avgs,
                                           momentum_buffer_list, grad_avgs, state_steps)
            rmsprop(params_with_grad, grads, square_avgs, grad_avgs, momentum_buffer_list,
                    state_steps, lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], foreach=group["foreach"],
                    maximize=group["maximize"], differentiable=group["differentiable"],
                    capturable=group["capturable"], has_complex=has_complex)
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered) -> None:
    """Functional RMSprop (see :class:`RMSprop`); ``foreach`` runs the single-tensor loop."""
    _check_state_steps(state_steps)
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        step = state_steps[i]
        if capturable:
            _check_capturable_devices(param, step)
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]

        step += 1

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        is_complex_param = torch.is_complex(param)
        if is_complex_param:   # complex numbers update as pairs of reals
            param = torch.view_as_real(param)
            grad = torch.view_as_real(grad)
            square_avg = torch.view_as_real(square_avg)

        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)

        if centered:
            grad_avg = grad_avgs[i]
            if is_complex_param:
                grad_avg = torch.view_as_real(grad_avg)
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps) if differentiable else avg.add_(eps)

        if momentum > 0:
            buf = momentum_buffer_list[i]
            if is_complex_param:
                buf = torch.view_as_real(buf)
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
