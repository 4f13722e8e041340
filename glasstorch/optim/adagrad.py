"""torch.optim.adagrad: Adagrad, per-coordinate learning rates from accumulated squares.

Per parameter, with g its gradient (negated when maximizing) and t the step count:

    g = g + weight_decay * p                      (if weight_decay != 0)
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g                                 (``state["sum"]``, from initial_accumulator_value)
    p = p - clr * g / (sqrt(s) + eps)

Unlike the other optimizers, the state is created in the constructor.
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (Optimizer, _check_non_negative, _check_state_steps, _check_tensor_lr,
                        _device_dtype_check_for_fused, _get_scalar_dtype, _get_value,
                        _to_scalar, _use_grad_for_differentiable)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Implements the Adagrad algorithm."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False,
                 fused=None) -> None:
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                            initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        self._check_fused_options(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], group, p, initial_accumulator_value)

    @staticmethod
    def _init_state(state, group, p, initial_accumulator_value) -> None:
        state["step"] = (torch.zeros((), dtype=_get_scalar_dtype(is_fused=group["fused"]),
                                     device=p.device)
                         if group["fused"] else torch.tensor(0.0, dtype=_get_scalar_dtype()))
        init_value = (complex(initial_accumulator_value, initial_accumulator_value)
                      if torch.is_complex(p) else initial_accumulator_value)
        state["sum"] = torch.full_like(p, init_value, memory_format=torch.preserve_format)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"foreach": None, "maximize": False,
                                          "differentiable": False, "fused": None})
        self._restore_step_tensors()
        # state not tied to a parameter (kept as loaded) gets a tensor step too, typed as
        # PyTorch types it: by the last group's ``fused``
        state_values = list(self.state.values())
        if state_values and not torch.is_tensor(state_values[0]["step"]):
            fused = self.param_groups[-1]["fused"] if self.param_groups else None
            for s in state_values:
                s["step"] = torch.tensor(float(s["step"]), dtype=_get_scalar_dtype(fused))

    def _init_group(self, group, params_with_grad, grads, state_sums, state_steps):
        has_sparse_grad, has_complex = False, False
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"]:
                self._check_fused_param_once(p)
            has_sparse_grad |= p.grad.is_sparse
            has_complex |= torch.is_complex(p)
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:   # a parameter added after construction
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                self._init_state(state, group, p, self.defaults["initial_accumulator_value"])
            state_sums.append(state["sum"])
            state_steps.append(state["step"])
        return has_sparse_grad, has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads, state_sums, state_steps = [], [], [], []
            has_sparse_grad, has_complex = self._init_group(group, params_with_grad, grads,
                                                            state_sums, state_steps)
            adagrad(params_with_grad, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], has_sparse_grad=has_sparse_grad, foreach=group["foreach"],
                    maximize=group["maximize"], differentiable=group["differentiable"],
                    has_complex=has_complex, fused=group["fused"])
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None,
            has_sparse_grad=False, foreach=None, differentiable=False, has_complex=False, *, lr,
            weight_decay, lr_decay, eps, maximize) -> None:
    """Functional Adagrad (see :class:`Adagrad`); every ``foreach``/``fused`` choice runs
    the single-tensor loop (glasstorch gradients are dense)."""
    _check_state_steps(state_steps)
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    lr = _to_scalar(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        step = _get_value(step_t)
        grad = grad if not maximize else -grad

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        clr = lr / (1 + (step - 1) * lr_decay)

        if torch.is_complex(param):   # complex numbers update as pairs of reals
            grad = torch.view_as_real(grad)
            state_sum = torch.view_as_real(state_sum)
            param = torch.view_as_real(param)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
