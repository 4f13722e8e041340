"""Helpers shared by many formulas: reducing a broadcast gradient, scalar
multipliers, real/complex handling, as_strided's backward."""
from __future__ import annotations

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops

__all__ = ["sum_to", "maybe_multiply", "handle_r_to_c", "not_implemented", "as_strided_backward",
           "mul_tensor_backward",
           "is_complex_dtype", "conj_if_complex", "scalar_conj"]

aten = ops.aten


def sum_to(t, shape):
    """``at::sum_to``: sum ``t`` down to ``shape`` (leading dims, and dims that
    were 1 and got broadcast), keeping the result's dims as ``shape`` has them."""
    shape = tuple(shape)
    # (lengths first: symbolic sizes compared across dims would leave guards)
    if len(t._shape) == len(shape) and t._shape == shape:
        return t
    if not shape:
        return aten.sum.default(t)
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
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


def _maybe_overlapping(sizes, strides) -> bool:
    """Could two positions of this geometry share a storage element?  (Walk the
    dims by increasing stride; each must step past everything before it.)"""
    reach = 0
    for stride, size in sorted(zip(strides, sizes)):
        if stride <= reach:
            return True
        reach += stride * (size - 1)
    return False


def as_strided_backward(grad, geometry, size, stride, storage_offset):
    """Scatter ``grad`` (laid out as ``size/stride/storage_offset`` over the
    input's storage) back into the input's geometry, as FunctionsManual's
    as_strided_backward does: zeros as big as the storage both geometries
    cover, the gradient written (added, where output elements overlap)
    through the output's geometry, then read back through the input's.  An
    input that itself overlaps gets each storage element's gradient divided by
    how many input positions share it."""
    in_shape, in_stride, in_offset = geometry
    out_offset = in_offset if storage_offset is None else storage_offset
    if 0 in size or 0 in in_shape:
        return aten.zeros.default(list(in_shape), dtype=grad.dtype, device=grad.device)
    out_size, out_stride = [], []
    for i in reversed(range(len(size))):
        if size[i] == 1:                 # one element: the dim only costs indexing
            grad = aten.squeeze.dim(grad, i)
        elif stride[i] == 0:             # every element is the same storage element
            grad = aten.sum.dim_IntList(grad, [i], False)
        else:
            out_size.insert(0, size[i])
            out_stride.insert(0, stride[i])
    in_dims = [(n, st) for n, st in zip(in_shape, in_stride) if n != 1]
    shared = min(in_offset, out_offset)
    in_start, out_start = in_offset - shared, out_offset - shared
    length = max(in_start + sum((n - 1) * st for n, st in in_dims),
                 out_start + sum((n - 1) * st for n, st in zip(out_size, out_stride))) + 1
    storage = aten.new_zeros.default(grad, [length])
    in_overlap = _maybe_overlapping([n for n, _ in in_dims], [st for _, st in in_dims])
    out_overlap = _maybe_overlapping(out_size, out_stride)
    if in_overlap or out_overlap:
        positions = aten.arange.start(0, length, dtype=dt.int64, device=grad.device)
    if out_overlap:
        out_index = aten.as_strided.default(positions, out_size, out_stride, out_start)
        flat_grad = aten.reshape.default(grad, [-1])
        aten.index_add_.default(storage, 0, aten.reshape.default(out_index, [-1]), flat_grad)
    else:
        aten.copy_.default(aten.as_strided.default(storage, out_size, out_stride, out_start),
                           grad)
    if in_overlap:
        in_index = aten.reshape.default(aten.as_strided.default(
            positions, [n for n, _ in in_dims], [st for _, st in in_dims], in_start), [-1])
        count = aten.zeros_like.default(storage)
        ones = aten.expand.default(aten.ones.default([1], dtype=grad.dtype, device=grad.device),
                                   list(in_index.shape))
        aten.index_add_.default(count, 0, in_index, ones)
        aten.div_.Tensor(storage, count)     # nan where no input position reads
    return aten.as_strided.default(storage, list(in_shape), list(in_stride), in_start)


def mul_tensor_backward(grad, other, self_dtype):
    """grad * conj(other), real part for a real input."""
    if is_complex_dtype(other.dtype):
        other = aten.conj.default(other)
    return handle_r_to_c(self_dtype, aten.mul.Tensor(grad, other))


def conj_if_complex(t):
    """``t.conj()``: a real tensor is returned as is (no op), as in PyTorch."""
    return aten.conj.default(t) if is_complex_dtype(t.dtype) else t


def scalar_conj(s):
    """``Scalar.conj()`` for a Python number."""
    return s.conjugate() if isinstance(s, complex) else s
