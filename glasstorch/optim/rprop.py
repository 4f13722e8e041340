"""torch.optim.rprop: resilient backpropagation, per-coordinate steps driven by gradient signs.

Per parameter, with g its gradient (negated when maximizing):

    s = sign(g * g_prev) mapped to etaplus (> 0), etaminus (< 0) or 1 (== 0)
    step_size = clamp(step_size * s, step_size_min, step_size_max)
    g = 0 where the sign flipped (s == etaminus)
    p = p - sign(g) * step_size;  g_prev = g

PyTorch's single-tensor loop, op for op (boolean-mask assignments included);
``foreach=True`` runs the same loop.
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (Optimizer, _check_capturable_devices, _check_non_negative,
                        _check_state_steps, _check_tensor_lr, _get_scalar_dtype, _to_scalar,
                        _use_grad_for_differentiable)

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Implements the resilient backpropagation algorithm."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False) -> None:
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"foreach": None, "maximize": False,
                                          "differentiable": False, "capturable": False})
        self._restore_step_tensors()

    def _init_group(self, group, params, grads, prevs, step_sizes, state_steps) -> bool:
        has_complex = self._gather_params_with_grad(group, params, grads,
                                                    "Rprop does not support sparse gradients")
        for p, grad in zip(params, grads):
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.zeros((), dtype=_get_scalar_dtype())
                state["prev"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                lr = _to_scalar(group["lr"])
                state["step_size"] = torch.full_like(
                    grad, complex(lr, lr) if p.dtype.is_complex else lr)
            prevs.append(state["prev"])
            step_sizes.append(state["step_size"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params, grads, prevs, step_sizes, state_steps = [], [], [], [], []
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            has_complex = self._init_group(group, params, grads, prevs, step_sizes,
                                           state_steps)
            rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                  step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
                  foreach=group["foreach"], maximize=group["maximize"],
                  differentiable=group["differentiable"], capturable=group["capturable"],
                  has_complex=has_complex)
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus) -> None:
    """Functional Rprop (see :class:`Rprop`); ``foreach`` runs the single-tensor loop."""
    _check_state_steps(state_steps)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        prev, step_size, step = prevs[i], step_sizes[i], state_steps[i]
        if capturable:
            _check_capturable_devices(param, step)

        step += 1

        if torch.is_complex(param):   # complex numbers update as pairs of reals
            grad = torch.view_as_real(grad)
            prev = torch.view_as_real(prev)
            param = torch.view_as_real(param)
            step_size = torch.view_as_real(step_size)

        sign = grad.mul(prev.clone() if differentiable else prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1

        # update step sizes with the step size updates
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)

        # where the direction changed, the gradient counts as 0 (no step, no sign memory)
        grad = grad.clone(memory_format=torch.preserve_format)
        grad[sign.eq(etaminus)] = 0

        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
