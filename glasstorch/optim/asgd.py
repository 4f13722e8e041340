"""torch.optim.asgd: averaged stochastic gradient descent.

Per parameter, with g its gradient (negated when maximizing) and t the step count:

    g = g + weight_decay * p                     (if weight_decay != 0)
    p = p * (1 - lambd * eta) - eta * g
    ax = ax + mu * (p - ax)                       (ax = p while mu == 1)
    eta = lr / (1 + lambd * lr * t)**alpha;  mu = 1 / max(1, t - t0)

``state["eta"]`` and ``state["mu"]`` are 0-dim tensors like the step count, and
``state["ax"]`` is the running average of the parameter.  PyTorch's
single-tensor loop, op for op; ``foreach=True`` runs the same loop (PyTorch's
multi-tensor ASGD computes ``p - eta * (g + lambd * p)`` and always averages, so
it agrees with this to rounding).
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (Optimizer, _check_capturable_devices, _check_non_negative,
                        _check_tensor_lr, _get_scalar_dtype, _get_value, _to_scalar,
                        _use_grad_for_differentiable)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """Implements Averaged Stochastic Gradient Descent."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False) -> None:
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr, weight_decay=weight_decay)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"foreach": None, "maximize": False,
                                          "differentiable": False, "capturable": False})
        self._restore_step_tensors(keys=("step", "eta", "mu"))

    def _init_group(self, group, params_with_grad, grads, mus, axs, etas, state_steps) -> bool:
        has_complex = self._gather_params_with_grad(group, params_with_grad, grads,
                                                    "ASGD does not support sparse gradients")
        for p in params_with_grad:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.zeros((), device=p.device, dtype=_get_scalar_dtype())
                state["eta"] = torch.as_tensor(_to_scalar(group["lr"]), device=p.device,
                                               dtype=_get_scalar_dtype()).clone().detach()
                state["mu"] = torch.ones((), device=p.device, dtype=_get_scalar_dtype())
                state["ax"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            mus.append(state["mu"])
            axs.append(state["ax"])
            etas.append(state["eta"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads, mus, axs, etas, state_steps = [], [], [], [], [], []
            has_complex = self._init_group(group, params_with_grad, grads, mus, axs, etas,
                                           state_steps)
            asgd(params_with_grad, grads, axs, mus, etas, state_steps, lambd=group["lambd"],
                 lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                 weight_decay=group["weight_decay"], foreach=group["foreach"],
                 maximize=group["maximize"], differentiable=group["differentiable"],
                 capturable=group["capturable"], has_complex=has_complex)
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay) -> None:
    """Functional ASGD (see :class:`ASGD`); ``foreach`` runs the single-tensor loop."""
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        mu, ax, eta, step_t = mus[i], axs[i], etas[i], state_steps[i]
        if capturable:
            _check_capturable_devices(param, mu, eta, step_t,
                                      names="params, mus, etas, and state_steps")

        if torch.is_complex(param):   # complex numbers update as pairs of reals
            grad = torch.view_as_real(grad)
            param = torch.view_as_real(param)
            ax = torch.view_as_real(ax)

        step_t += 1

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        eta_value = _get_value(eta)
        param.mul_(1 - lambd * eta_value)   # decay term
        param.add_(grad, alpha=-eta_value)  # update parameter

        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)

        step = _get_value(step_t)
        eta.copy_(torch.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.copy_(torch.as_tensor(1 / max(1, step - t0)))
