"""torch.optim.adamax: Adamax, Adam with the infinity norm in place of the second moment.

Per parameter, with g its gradient (negated when maximizing) and t the step count:

    g = g + weight_decay * p                   (if weight_decay != 0)
    m = lerp(m, g, 1 - beta1)                  first moment
    u = max(beta2 * u, |g| + eps)              exponentially weighted infinity norm
    p = p - lr / (1 - beta1**t) * m / u

PyTorch's single-tensor loop, op for op; ``foreach=True`` runs the same loop.
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (Optimizer, _check_betas, _check_capturable_devices, _check_non_negative,
                        _check_state_steps, _check_tensor_lr, _get_scalar_dtype, _get_value,
                        _to_scalar, _use_grad_for_differentiable)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Implements the Adamax algorithm (a variant of Adam based on the infinity norm)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False,
                 capturable=False) -> None:
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"foreach": None, "maximize": False,
                                          "differentiable": False, "capturable": False})
        self._restore_step_tensors()

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_infs,
                    state_steps) -> bool:
        has_complex = self._gather_params_with_grad(group, params_with_grad, grads,
                                                    "Adamax does not support sparse gradients")
        for p in params_with_grad:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.tensor(0.0, dtype=_get_scalar_dtype())
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_inf"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            exp_avgs.append(state["exp_avg"])
            exp_infs.append(state["exp_inf"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_infs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs, exp_infs,
                                           state_steps)
            adamax(params_with_grad, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"],
                   beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"], foreach=group["foreach"],
                   maximize=group["maximize"], differentiable=group["differentiable"],
                   capturable=group["capturable"], has_complex=has_complex)
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2,
           lr, weight_decay) -> None:
    """Functional Adamax (see :class:`Adamax`); ``foreach`` runs the single-tensor loop."""
    _check_state_steps(state_steps)
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf, step_t = exp_avgs[i], exp_infs[i], state_steps[i]
        if capturable:
            _check_capturable_devices(param, step_t)

        step_t += 1

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        if torch.is_complex(param):   # complex numbers update as pairs of reals
            param = torch.view_as_real(param)
            grad = torch.view_as_real(grad)
            exp_avg = torch.view_as_real(exp_avg)
            exp_inf = torch.view_as_real(exp_inf)

        exp_avg.lerp_(grad, 1 - beta1)
        if differentiable:   # maximum's out= has no derivative: take the max of a stack
            norm_buf = torch.cat([exp_inf.mul_(beta2).unsqueeze(0),
                                  grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(torch.amax(norm_buf, 0, keepdim=False))
        else:
            torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)

        clr = lr / (1 - beta1 ** _get_value(step_t))
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
