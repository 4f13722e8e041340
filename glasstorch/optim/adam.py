"""torch.optim.adam: Adam, with the AMSGrad variant and (for AdamW) decoupled weight decay.

Per parameter, with g its gradient (negated when maximizing) and t the step count:

    p = p * (1 - lr * weight_decay)   (decoupled)   or   g = g + weight_decay * p
    m = lerp(m, g, 1 - beta1)                        first moment
    v = beta2 * v + (1 - beta2) * g * g              second moment
    v_max = max(v_max, v)                            (amsgrad: v_max replaces v below)
    p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

The bias corrections are Python floats computed from the step count
(``state["step"]``, a 0-dim float tensor), as PyTorch's CPU loop does; with
``differentiable=True`` they stay tensors so autograd sees them.
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (Optimizer, _check_betas, _check_capturable_devices, _check_non_negative,
                        _check_state_steps, _check_tensor_lr, _device_dtype_check_for_fused,
                        _get_scalar_dtype, _get_value, _to_scalar, _use_grad_for_differentiable)

__all__ = ["Adam", "adam"]


class Adam(Optimizer):
    """Implements the Adam algorithm."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False) -> None:
        if isinstance(lr, torch.Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay)
        both_floats = isinstance(betas[0], float) and isinstance(betas[1], float)
        both_tensors = isinstance(betas[0], torch.Tensor) and isinstance(betas[1], torch.Tensor)
        if not (both_floats or both_tensors):
            raise ValueError("betas must be either both floats or both Tensors")
        for index, beta in enumerate(betas[:2]):
            if isinstance(beta, torch.Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{index}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{index}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))

        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        self._check_fused_options(fused, foreach, differentiable)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({
            "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
            "differentiable": False, "decoupled_weight_decay": False, "fused": None})
        self._restore_step_tensors()

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    max_exp_avg_sqs, state_steps) -> bool:
        has_complex = self._gather_params_with_grad(
            group, params_with_grad, grads,
            "Adam does not support sparse gradients, please consider SparseAdam instead")
        for p in params_with_grad:
            state = self.state[p]
            if len(state) == 0:   # lazy state initialization
                if group["fused"]:
                    _device_dtype_check_for_fused(p)
                # the step count lives on the CPU unless capturable/fused
                if group["capturable"] or group["fused"]:
                    state["step"] = torch.zeros((), dtype=_get_scalar_dtype(group["fused"]),
                                                device=p.device)
                else:
                    state["step"] = torch.tensor(0.0, dtype=_get_scalar_dtype(), device="cpu")
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = torch.zeros_like(
                        p, memory_format=torch.preserve_format)

            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            if group["differentiable"] and state["step"].requires_grad:
                raise RuntimeError("`requires_grad` is not supported for `step` in "
                                   "differentiable mode")
            if group["foreach"] and torch.is_tensor(group["lr"]) and not group["capturable"]:
                raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                                   "foreach=True")
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_avg_sqs = [], [], [], []
            max_exp_avg_sqs, state_steps = [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs,
                                           exp_avg_sqs, max_exp_avg_sqs, state_steps)
            adam(params_with_grad, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                 amsgrad=group["amsgrad"], has_complex=has_complex, beta1=beta1, beta2=beta2,
                 lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], foreach=group["foreach"],
                 capturable=group["capturable"], differentiable=group["differentiable"],
                 fused=group["fused"],
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize) -> None:
    """Functional Adam (see :class:`Adam`); every ``foreach``/``fused`` choice runs the
    single-tensor loop."""
    _check_state_steps(state_steps)
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Expected grad_scale and found_inf to be None")
    lr, beta1, beta2 = _to_scalar(lr), _to_scalar(beta1), _to_scalar(beta2)
    beta1_by_dtype = {(beta1.device, beta1.dtype): beta1} if isinstance(beta1, torch.Tensor) \
        else None

    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        if capturable:
            _check_capturable_devices(param, step_t)

        step_t += 1

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            elif differentiable and isinstance(weight_decay, torch.Tensor) \
                    and weight_decay.requires_grad:
                grad = grad.addcmul_(param.clone(), weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        if torch.is_complex(param):   # complex numbers update as pairs of reals
            grad = torch.view_as_real(grad)
            exp_avg = torch.view_as_real(exp_avg)
            exp_avg_sq = torch.view_as_real(exp_avg_sq)
            if amsgrad:
                max_exp_avg_sqs[i] = torch.view_as_real(max_exp_avg_sqs[i])
            param = torch.view_as_real(param)

        device_beta1 = beta1
        if beta1_by_dtype is not None:   # a tensor beta1, cast once per device and dtype
            key = (param.device, param.dtype)
            if key not in beta1_by_dtype:
                beta1_by_dtype[key] = beta1.to(device=param.device, dtype=param.dtype)
            device_beta1 = beta1_by_dtype[key]

        exp_avg.lerp_(grad, 1 - device_beta1)
        if differentiable and isinstance(beta2, torch.Tensor) and beta2.requires_grad:
            exp_avg_sq.lerp_(torch.square(grad), weight=1 - beta2)
        else:
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        if capturable or differentiable:
            _tensor_bias_corrected_update(param, exp_avg, exp_avg_sq, max_exp_avg_sqs, i, step_t,
                                          amsgrad, beta1, beta2, lr, eps, differentiable)
        else:
            step = _get_value(step_t)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2 ** 0.5
            if amsgrad:
                torch.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
                denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            if isinstance(step_size, torch.Tensor):   # compiling: addcdiv's value is a number
                param.add_(exp_avg / denom * -step_size)
            else:
                param.addcdiv_(exp_avg, denom, value=-step_size)

        if amsgrad and torch.is_complex(params[i]):
            max_exp_avg_sqs[i] = torch.view_as_complex(max_exp_avg_sqs[i])


def _tensor_bias_corrected_update(param, exp_avg, exp_avg_sq, max_exp_avg_sqs, i, step,
                                  amsgrad, beta1, beta2, lr, eps, differentiable):
    """The update with the step count kept a tensor: bias corrections are ops, and
    the step size is folded into the denominator (addcdiv's value must be a number)."""
    def bias_correction(beta):
        if differentiable and isinstance(beta, torch.Tensor) and beta.requires_grad:
            return 1 - beta ** step.clone()
        return 1 - beta ** step

    step_size_neg = (lr / bias_correction(beta1)).neg()
    bias_correction2_sqrt = bias_correction(beta2).sqrt()
    if amsgrad:
        previous = max_exp_avg_sqs[i].clone() if differentiable else max_exp_avg_sqs[i]
        max_exp_avg_sqs[i].copy_(torch.maximum(previous, exp_avg_sq))
        second_moment = max_exp_avg_sqs[i]
    else:
        second_moment = exp_avg_sq
    denom = (second_moment.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
        eps / step_size_neg)
    param.addcdiv_(exp_avg.clone() if differentiable else exp_avg, denom)
