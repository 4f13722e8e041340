"""Gradient helpers of the tensor utilities (kernels/utility.py; PyTorch's
FunctionsManual.cpp)."""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from .common import handle_r_to_c

__all__ = ["block_diag_backward"]

aten = ops.aten


def block_diag_backward(grad, sizes, dtypes):
    """Input i gets its block of the gradient (a 0-d or 1-d input's block reshaped
    back; a 1-d empty input gets an empty gradient, as in PyTorch)."""
    grads, row, col = [], 0, 0
    for shape, dtype in zip(sizes, dtypes):
        shape = list(shape)
        if shape == [0]:
            grads.append(aten.zeros.default([0], dtype=grad.dtype, device=grad.device))
            continue
        rows, cols = shape if len(shape) == 2 else (1, shape[0] if shape else 1)
        block = aten.slice.Tensor(aten.slice.Tensor(grad, 0, row, row + rows), 1, col,
                                  col + cols)
        if len(shape) != 2:
            block = aten.reshape.default(block, shape)
        grads.append(handle_r_to_c(dtype, block))
        row, col = row + rows, col + cols
    return grads
