"""cosine_similarity and pairwise_distance (ATen's Distance.cpp): CompositeImplicitAutograd
decompositions, with PyTorch's op sequence.

    cosine_similarity(x1, x2, dim, eps) = sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps)), dim)
        (each vector is divided by its clamped 2-norm first, which keeps the result in [-1, 1])
    pairwise_distance(x1, x2, p, eps, keepdim) = norm(x1 - x2 + eps, p, last dim)
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from ..._core.tls import state as _tls
from ..structured import broadcast_shapes, result_type
from . import kernel

__all__ = []

aten = ops.aten


@kernel("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{common._short}")
    # integer (and bool) inputs are converted; linalg_vector_norm takes floats only
    if not x1.dtype.is_floating_point:
        x1 = aten.to.dtype(x1, common)
    if not x2.dtype.is_floating_point:
        x2 = aten.to.dtype(x2, common)
    if x1._shape != x2._shape:                       # expand_outplace
        shape = list(broadcast_shapes(x1._shape, x2._shape))
        x1, x2 = aten.expand.default(x1, shape), aten.expand.default(x2, shape)
    x1_norm = aten.clone.default(aten.linalg_vector_norm.default(x1, 2, [dim], True))
    x2_norm = aten.clone.default(aten.linalg_vector_norm.default(x2, 2, [dim], True))
    grad_enabled, _tls.grad_enabled = _tls.grad_enabled, False   # NoGradGuard: the clamp
    try:                                                          # is not differentiated
        eps_tensor = aten.scalar_tensor.default(eps, dtype=x1_norm.dtype, device=x1_norm.device)
        aten.clamp_min_.Tensor(x1_norm, eps_tensor)
        aten.clamp_min_.Tensor(x2_norm, eps_tensor)
    finally:
        _tls.grad_enabled = grad_enabled
    return aten.sum.dim_IntList(aten.mul.Tensor(aten.div.Tensor(x1, x1_norm),
                                                aten.div.Tensor(x2, x2_norm)), [dim])


@kernel("pairwise_distance")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    innermost = max(len(x1._shape), len(x2._shape)) - 1
    difference = aten.add.Scalar(aten.sub.Tensor(x1, x2), eps)
    return aten.norm.ScalarOpt_dim(difference, p, [innermost], keepdim)
