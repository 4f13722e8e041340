"""Helpers shared by many formulas: reducing a broadcast gradient, scalar
multipliers, real/complex handling, as_strided's backward."""
from __future__ import annotations

import math

from ..._dispatcher.dispatcher import ops
from ..._tensor import _non_overlapping_and_dense

__all__ = ["sum_to", "maybe_multiply", "handle_r_to_c", "not_implemented", "as_strided_backward",
           "mul_tensor_backward",
           "is_complex_dtype"]

aten = ops.aten


def sum_to(t, shape):
    """``at::sum_to``: sum ``t`` down to ``shape`` (leading dims, and dims that
    were 1 and got broadcast), keeping the result's dims as ``shape`` has them."""
    shape = tuple(shape)
    if t._shape == shape:
        return t
    lead = t.dim() - len(shape)
    dims = list(range(lead))
    for i, size in enumerate(shape):
        if size == 1 and t._shape[lead + i] != 1:
            dims.append(lead + i)
    result = aten.sum.dim_IntList(t, dims, True) if dims else t
    if lead > 0:
        result = aten.view.default(result, list(shape))
    return result


def maybe_multiply(t, s):
    """``t * s``, skipped when ``s == 1`` (no op is recorded)."""
    if isinstance(s, bool) or not (isinstance(s, (int, float)) and s == 1):
        return aten.mul.Scalar(t, s) if not hasattr(s, "_shape") else aten.mul.Tensor(t, s)
    return t


def is_complex_dtype(dtype) -> bool:
    return dtype.category == 3


def handle_r_to_c(self_dtype, grad):
    """A real input's gradient is the real part of a complex gradient."""
    if grad is not None and not is_complex_dtype(self_dtype) and is_complex_dtype(grad.dtype):
        return aten.real.default(grad)
    return grad


def not_implemented(name):
    raise RuntimeError(f"the derivative for '{name}' is not implemented.")


def as_strided_backward(grad, geometry, size, stride, storage_offset):
    """Scatter-add ``grad`` (laid out as ``size/stride/storage_offset`` over the
    input's storage) back into the input's geometry.  Overlapping output
    elements add up; an input that itself overlaps gets each storage element's
    gradient divided by how many input positions share it."""
    in_shape, in_stride, in_offset = geometry
    out_offset = in_offset if storage_offset is None else storage_offset

    def extent(shape, strides, offset):
        if 0 in shape:
            return offset
        return offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1

    length = max(extent(in_shape, in_stride, in_offset), extent(size, stride, out_offset))
    storage = aten.zeros.default([length], dtype=grad.dtype, device=grad.device)
    index = aten.arange.default(length, device=grad.device)
    out_index = aten.as_strided.default(index, list(size), list(stride), out_offset)
    storage = aten.index_put.default(storage, [aten.reshape.default(out_index, [-1])],
                                     aten.reshape.default(grad, [-1]), True)
    result = aten.as_strided.default(storage, list(in_shape), list(in_stride), in_offset)
    if _non_overlapping_and_dense(in_shape, in_stride) or math.prod(in_shape) == 0:
        return aten.clone.default(result)
    in_index = aten.reshape.default(
        aten.as_strided.default(index, list(in_shape), list(in_stride), in_offset), [-1])
    counts = aten.zeros.default([length], dtype=grad.dtype, device=grad.device)
    counts = aten.index_put.default(counts, [in_index],
                                    aten.ones_like.default(in_index, dtype=grad.dtype), True)
    counts = aten.as_strided.default(counts, list(in_shape), list(in_stride), in_offset)
    return aten.div.Tensor(result, counts)


def mul_tensor_backward(grad, other, self_dtype):
    """grad * conj(other), real part for a real input."""
    if is_complex_dtype(other.dtype):
        other = aten.conj.default(other)
    return handle_r_to_c(self_dtype, aten.mul.Tensor(grad, other))
