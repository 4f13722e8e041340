"""torch.optim.nadam: NAdam, Adam with Nesterov momentum.

Per parameter, with g its gradient (negated when maximizing) and t the step count:

    p = p * (1 - lr * weight_decay)   (decoupled)   or   g = g + weight_decay * p
    mu_t = beta1 * (1 - 0.5 * 0.96**(t * momentum_decay));  prod = prod * mu_t
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    denom = sqrt(v / (1 - beta2**t)) + eps
    p = p - lr * (1 - mu_t) / (1 - prod) * g / denom
          - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / denom

The running product of the mu's is kept in ``state["mu_product"]``, a 0-dim
tensor like the step count.  PyTorch's single-tensor loop, op for op;
``foreach=True`` runs the same loop.
"""
from __future__ import annotations

import glasstorch as torch
from .optimizer import (Optimizer, _check_betas, _check_capturable_devices, _check_non_negative,
                        _check_state_steps, _check_tensor_lr, _get_scalar_dtype, _get_value,
                        _to_scalar, _use_grad_for_differentiable)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """Implements the NAdam algorithm."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False) -> None:
        _check_tensor_lr(lr)
        _check_non_negative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"maximize": False, "foreach": None,
                                          "capturable": False, "differentiable": False,
                                          "decoupled_weight_decay": False})
        self._restore_step_tensors(keys=("step", "mu_product"))

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products,
                    state_steps) -> bool:
        has_complex = self._gather_params_with_grad(group, params_with_grad, grads,
                                                    "NAdam does not support sparse gradients")
        for p in params_with_grad:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.tensor(0.0, dtype=_get_scalar_dtype())
                state["mu_product"] = torch.tensor(1.0, dtype=_get_scalar_dtype())
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            mu_products.append(state["mu_product"])
            state_steps.append(state["step"])
        return has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_avg_sqs = [], [], [], []
            mu_products, state_steps = [], []
            beta1, beta2 = group["betas"]
            has_complex = self._init_group(group, params_with_grad, grads, exp_avgs,
                                           exp_avg_sqs, mu_products, state_steps)
            nadam(params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
                  beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  foreach=group["foreach"], capturable=group["capturable"],
                  differentiable=group["differentiable"], has_complex=has_complex)
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay, momentum_decay,
          eps) -> None:
    """Functional NAdam (see :class:`NAdam`); ``foreach`` runs the single-tensor loop."""
    _check_state_steps(state_steps)
    if not all(isinstance(t, torch.Tensor) for t in mu_products):
        raise RuntimeError("API has changed, `mu_products` argument must contain a list of "
                           "singleton tensors")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        mu_product, step_t = mu_products[i], state_steps[i]

        if torch.is_complex(param):   # complex numbers update as pairs of reals
            param = torch.view_as_real(param)
            grad = torch.view_as_real(grad)
            exp_avg = torch.view_as_real(exp_avg)
            exp_avg_sq = torch.view_as_real(exp_avg_sq)
        if capturable:
            _check_capturable_devices(param, mu_product, step_t,
                                      names="params, mu_products and state_steps")

        step_t += 1
        step = _get_value(step_t)
        bias_correction2 = 1 - beta2 ** step

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        # the momentum coefficients of this step and the next
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()

        if differentiable:   # the coefficients stay tensors so autograd sees mu_product
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
            exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
            param.addcdiv_(grad, denom)
            param.addcdiv_(exp_avg, denom)
        else:
            mu_product_next = _get_value(mu_product) * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom,
                           value=(-lr * (1.0 - mu) / (1.0 - _get_value(mu_product))))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
