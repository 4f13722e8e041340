"""torch.optim.Adafactor: Adam's second moment kept factored, as row and column
means of the squared gradient for matrices (memory O(n + m), not O(n m)).

Per parameter p with gradient g (negated when maximizing), at step t:

    beta2_t = 1 - t**beta2_decay        so 1 - beta2_t = t**beta2_decay
    rho_t   = min(lr, 1 / sqrt(t))
    alpha   = max(eps2, rms(p)) * rho_t
    p       = p * (1 - lr * weight_decay)                   (if weight_decay != 0)
    matrix:  R = lerp(R, mean(g**2, last dim), 1 - beta2_t)   (rows)
             C = lerp(C, mean(g**2, dim -2), 1 - beta2_t)      (columns)
             v = R @ C / max(mean(R over rows), eps1)
    vector:  v = lerp(v, g**2, 1 - beta2_t)
    u       = g / sqrt(max(v, eps1**2))
    p       = p - alpha / max(1, rms(u) / d) * u

PyTorch's single-tensor loop (what CPU runs), op for op.
"""
from __future__ import annotations

import glasstorch as torch
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _get_scalar_dtype, _to_scalar

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Implements the Adafactor algorithm (Shazeer and Stern, 2018)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False) -> None:
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._fill_missing_group_options({"foreach": None})
        self._restore_step_tensors()

    def _init_group(self, group, params, grads, row_vars, col_vars, variances, steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            if torch.is_complex(p):
                raise RuntimeError("Adafactor does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError("Adafactor does not support sparse gradients")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.tensor(0.0, dtype=_get_scalar_dtype())
                if p.grad.dim() > 1:
                    state["row_var"] = p.grad.new_zeros(list(p.grad.shape[:-1]) + [1])
                    col_shape = list(p.grad.shape)
                    col_shape[-2] = 1
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    state["variance"] = torch.zeros_like(p.grad,
                                                         memory_format=torch.preserve_format)
            row_vars.append(state.get("row_var"))
            col_vars.append(state.get("col_var"))
            variances.append(state.get("variance"))
            steps.append(state["step"])

    @no_grad()
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params, grads, row_vars, col_vars, variances, steps = [], [], [], [], [], []
            self._init_group(group, params, grads, row_vars, col_vars, variances, steps)
            eps1, eps2 = group["eps"]
            adafactor(params, grads, row_vars, col_vars, variances, steps, d=group["d"],
                      lr=group["lr"], beta2_decay=group["beta2_decay"],
                      weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                      foreach=group["foreach"], maximize=group["maximize"])
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None,
              grad_scale=None, found_inf=None, has_complex=False, *, d, lr, beta2_decay,
              weight_decay, eps1, eps2, maximize) -> None:
    """Functional Adafactor (see :class:`Adafactor`); ``foreach`` runs the same loop."""
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = _to_scalar(lr)
    for param, grad, row_var, col_var, variance, step_t in zip(
            params, grads, row_vars, col_vars, variances, state_steps):
        if maximize:
            grad = -grad
        if eps1 is None:
            eps1 = torch.finfo(param.dtype).eps
        step_t += 1
        step = step_t.item()
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            row_var.lerp_(torch.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1)),
                          one_minus_beta2_t)
            col_var.lerp_(torch.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2)),
                          one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denom)
