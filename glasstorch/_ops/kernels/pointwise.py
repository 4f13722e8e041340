"""Elementwise ops: meta rules (TensorIterator's broadcast, promotion, layout)
and numpy bodies.

    for each output element i:  out[i] = f(a[i], b[i])      (after broadcasting)

CPU computes in the "opmath" type (float32 for float16/bfloat16) and rounds
once when writing the output, as PyTorch does.
"""
from __future__ import annotations

import numpy as np

from ..structured import (TensorMeta, broadcast_shapes, check_same_device,
                          elementwise_strides, result_type)
from ..._tensor import Tensor
from . import impl, meta


def operand(x, compute):
    """A kernel's view of an operand: the tensor's array, or a Python scalar
    converted to the compute type (integers wrap, as PyTorch's casts do)."""
    if isinstance(x, Tensor):
        return x._np()
    if isinstance(x, int) and compute.kind in "iub" and not isinstance(x, bool):
        return np.array(x, dtype=np.int64).astype(compute)[()]
    return compute.type(x)


def binary_meta(self, other):
    """Broadcast shape, promoted dtype, strides that follow the inputs' layout."""
    dtype = result_type(self, other)
    if isinstance(other, Tensor):
        check_same_device(self, other)
        shape = broadcast_shapes(self._shape, other._shape)
    else:
        shape = self._shape
    return TensorMeta(shape, dtype, elementwise_strides(shape, (self, other)))


def binary_impl(ufunc):
    """A CPU body that runs ``ufunc`` in the opmath of the common dtype."""
    def body(out, self, other):
        compute = result_type(self, other).opmath
        ufunc(operand(self, compute), operand(other, compute), out=out._np(), dtype=compute,
              casting="unsafe")
    return body


@meta("add")
def add_meta(self, other, alpha=1):
    return binary_meta(self, other)


@impl("add")
def add_impl(out, self, other, alpha=1):
    compute = result_type(self, other).opmath
    b = operand(other, compute)
    if alpha != 1:
        b = np.multiply(b, operand(alpha, compute), dtype=compute)
    np.add(operand(self, compute), b, out=out._np(), dtype=compute, casting="unsafe")


meta("mul")(binary_meta)
impl("mul")(binary_impl(np.multiply))
