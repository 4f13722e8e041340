"""The ``_foreach_*`` ops PyTorch's own code calls on CPU (ForeachOpsKernels.cpp's
slow paths): one op per tensor of the list, so the profiler shows
``aten::_foreach_norm`` over one ``aten::linalg_vector_norm`` per tensor.
PyTorch's fused multi-tensor kernels are CUDA's; its CPU takes these loops.
``clip_grad_norm_`` calls them (nn/utils/clip_grad.py).
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor
from . import kernel

aten = ops.aten


def _check_list(tensors):
    """check_foreach_api_restrictions."""
    if len(tensors) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")


@kernel("_foreach_norm")
def _foreach_norm(self, ord=2, dtype=None):
    _check_list(self)
    return [aten.linalg_vector_norm.default(t, ord, None, False, dtype=dtype) for t in self]


@kernel("_foreach_mul__tensor")
def _foreach_mul__tensor(self, other):
    """Each tensor times a 0-dim tensor, in place (autograd per tensor: MulBackward0)."""
    _check_list(self)
    if isinstance(other, Tensor) and other.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                           f"dimensions and {other.numel()} elements.")
    for t in self:
        aten.mul_.Tensor(t, other)
