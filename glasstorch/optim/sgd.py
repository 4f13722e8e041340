"""torch.optim.sgd: stochastic gradient descent, optionally with (Nesterov) momentum.

Per parameter, with g its gradient (negated when maximizing):

    g = g + weight_decay * p                         (if weight_decay != 0)
    b = g.clone() on the first step, else b = momentum * b + (1 - dampening) * g
    g = g + momentum * b  (nesterov)   or   g = b
    p = p - lr * g

The momentum buffer starts as a copy of the first gradient, so dampening only
applies from the second step on (PyTorch's convention).
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import Optimizer, _check_tensor_lr, _to_scalar, _use_grad_for_differentiable

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Implements stochastic gradient descent (optionally with momentum)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None) -> None:
        _check_tensor_lr(lr)
        # unlike the other optimizers, SGD lets a NaN option through (as PyTorch does)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        self._check_fused_options(fused, foreach, differentiable)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"nesterov": False, "maximize": False, "foreach": None,
                                          "differentiable": False, "fused": False})

    def _init_group(self, group, params, grads, momentum_buffer_list) -> bool:
        has_sparse_grad = False
        for p in group["params"]:
            if p.grad is None:
                continue
            if group["fused"]:
                self._check_fused_param_once(p)
            params.append(p)
            grads.append(p.grad)
            if p.grad.is_sparse:
                has_sparse_grad = True
            if group["momentum"] != 0:
                momentum_buffer_list.append(self.state[p].get("momentum_buffer"))
        return has_sparse_grad

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params, grads, momentum_buffer_list = [], [], []
            has_sparse_grad = self._init_group(group, params, grads, momentum_buffer_list)
            sgd(params, grads, momentum_buffer_list, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"],
                has_sparse_grad=has_sparse_grad, foreach=group["foreach"], fused=group["fused"])
            if group["momentum"] != 0:   # buffers made on this step go into the state
                for p, buffer in zip(params, momentum_buffer_list):
                    self.state[p]["momentum_buffer"] = buffer
        return loss


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None,
        grad_scale=None, found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov,
        maximize) -> None:
    """Functional SGD (see :class:`SGD`); every ``foreach``/``fused`` choice runs the
    single-tensor loop."""
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = d_p_list[i] if not maximize else -d_p_list[i]

        if weight_decay != 0:
            if isinstance(weight_decay, torch.Tensor) and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = momentum_buffer_list[i] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf

        if isinstance(lr, torch.Tensor) and lr.requires_grad:
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-lr)
