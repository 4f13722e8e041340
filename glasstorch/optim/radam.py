"""torch.optim.radam: RAdam, Adam with the variance of the adaptive rate rectified.

Per parameter, with g its gradient (negated when maximizing) and t the step count:

    p = p * (1 - lr * weight_decay)   (decoupled)   or   g = g + weight_decay * p
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
    rho_t > 5:  p = p - m / (1 - beta1**t) * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t
    else:       p = p - m / (1 - beta1**t) * lr
    with r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))

PyTorch's single-tensor loop, op for op; ``foreach=True`` runs the same loop.
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (Optimizer, _check_betas, _check_capturable_devices, _check_non_negative,
                        _check_state_steps, _check_tensor_lr, _get_scalar_dtype, _get_value,
                        _to_scalar, _use_grad_for_differentiable)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """Implements the RAdam algorithm."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False) -> None:
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"foreach": None, "maximize": False,
                                          "differentiable": False,
                                          "decoupled_weight_decay": False, "capturable": False})
        self._restore_step_tensors()

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    state_steps) -> bool:
        has_complex = self._gather_params_with_grad(group, params_with_grad, grads,
                                                    "RAdam does not support sparse gradients")
        for p in params_with_grad:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.tensor(0.0, dtype=_get_scalar_dtype())
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs,
                                           exp_avg_sqs, state_steps)
            radam(params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1,
                  beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  eps=group["eps"], maximize=group["maximize"], foreach=group["foreach"],
                  capturable=group["capturable"], differentiable=group["differentiable"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  has_complex=has_complex)
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps) -> None:
    """Functional RAdam (see :class:`RAdam`); ``foreach`` runs the single-tensor loop."""
    _check_state_steps(state_steps)
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        if capturable:
            _check_capturable_devices(param, step_t)

        if torch.is_complex(param):   # complex numbers update as pairs of reals
            param = torch.view_as_real(param)
            grad = torch.view_as_real(grad)
            exp_avg = torch.view_as_real(exp_avg)
            exp_avg_sq = torch.view_as_real(exp_avg_sq)

        step_t += 1
        step = _get_value(step_t)

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        # the maximum and the current length of the approximated simple moving average
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2

        if rho_t > 5.0:   # the variance is tractable: rectify the adaptive rate
            exp_avg_sq_sqrt = exp_avg_sq.sqrt()
            exp_avg_sq_sqrt = (exp_avg_sq_sqrt.add(eps) if differentiable
                               else exp_avg_sq_sqrt.add_(eps))
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq_sqrt
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
