"""torch.optim.sparse_adam: SparseAdam, Adam for sparse gradients (embedding tables).

PyTorch's SparseAdam is "lazy": a step reads and updates only the entries of
the moments and the parameter that the (coalesced) sparse gradient touches;
the others keep their values.  A dense gradient raises PyTorch's error.
"""
from __future__ import annotations

import math

from .._dispatcher.dispatcher import ops
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _check_betas, _check_tensor_lr

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Implements the lazy version of Adam for sparse gradients (dense ones raise)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False) -> None:
        _check_tensor_lr(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)

        sparse_params, complex_params = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, param in enumerate(group["params"]):
                if param.is_sparse:
                    sparse_params.append([index, d_index])
                if param.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires "
                             "dense parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    @no_grad()
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = p.new_zeros(p.shape)
                    state["exp_avg_sq"] = p.new_zeros(p.shape)
                state["step"] += 1
                _lazy_adam_update(p, p.grad, state, beta1, beta2, group["eps"],
                                  float(group["lr"]), group.get("maximize", False))
        return loss


def _lazy_adam_update(param, grad, state, beta1, beta2, eps, lr, maximize):
    """One step over the rows a sparse gradient names (sparse_adam in
    torch/optim/_functional.py): the moments move toward the gradient by
    (1 - beta) of the difference, then the parameter by the bias-corrected ratio."""
    grad = (-grad if maximize else grad).coalesce()
    indices, values = grad._indices(), grad._values()
    if values.numel() == 0:
        return
    exp_avg, exp_avg_sq, step = state["exp_avg"], state["exp_avg_sq"], state["step"]

    def at_grad(values_):
        return ops.aten._sparse_coo_tensor_unsafe.default(indices, values_, list(grad.shape))

    old_avg = exp_avg.sparse_mask(grad)._values()
    avg_update = values.sub(old_avg).mul_(1 - beta1)
    exp_avg.add_(at_grad(avg_update))
    old_avg_sq = exp_avg_sq.sparse_mask(grad)._values()
    avg_sq_update = values.pow(2).sub_(old_avg_sq).mul_(1 - beta2)
    exp_avg_sq.add_(at_grad(avg_sq_update))

    numer = avg_update.add_(old_avg)
    denom = avg_sq_update.add_(old_avg_sq).sqrt_().add_(eps)
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    param.add_(at_grad(-step_size * numer.div_(denom)))
