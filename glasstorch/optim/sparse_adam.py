"""torch.optim.sparse_adam: SparseAdam, Adam for sparse gradients (embedding tables).

PyTorch's SparseAdam updates only the moments and parameter entries a sparse
gradient touches.  glasstorch has no sparse tensors yet, so every gradient is
dense and a step over a parameter with a gradient raises PyTorch's
dense-gradient error; the constructor validates its options as PyTorch does,
and a step with no gradients only evaluates the closure.
"""
from __future__ import annotations

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
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
        return loss
