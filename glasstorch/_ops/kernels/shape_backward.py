"""Backward ops of views and indexing (the aten ops PyTorch's gradient formulas
call), the two scatter-adds they need (``index_add``, ``put``), and the complex
views a real input's gradient is taken through (``real``: a complex gradient's
real part, ``view_as_real`` / ``view_as_complex``).

The view backwards all do the same thing: start from zeros of the input's
shape and write the incoming gradient through the view that the forward op
took, e.g. ``select_backward(g, (3, 4), 0, 1)`` is ``zeros(3, 4)`` with ``g``
written into row 1.  ``unfold_backward`` *adds* instead of writing, because
unfold's windows may overlap.  Outputs are contiguous, as PyTorch's are.
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..structured import TensorMeta, assert_no_overlap, broadcast_shapes, overlap_rule, wrap_dim
from ..._dispatcher.dispatcher import ops
from . import impl, kernel, meta
from .indexing import _INDEX_TYPES, _check_index_range, check_flat_index
from .view import INT64_MAX, _shape_str, make_view, strides_for_format


def _zeroed(out):
    """``out``'s bytes as a numpy array, set to zero."""
    array = out._np()
    array[...] = 0
    return array


# -- select / slice / diagonal / unfold backward -------------------------------------------

@meta("select_backward")
def select_backward_meta(grad_output, input_sizes, dim, index):
    return TensorMeta(tuple(input_sizes), grad_output.dtype)


@impl("select_backward")
def select_backward_impl(out, grad_output, input_sizes, dim, index):
    array = _zeroed(out)
    dim = wrap_dim(dim, len(input_sizes))
    size = input_sizes[dim]
    if index < -size or index >= size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_shape_str(input_sizes)} at dimension {dim}")
    where = [slice(None)] * len(input_sizes)
    where[dim] = index
    array[tuple(where)] = grad_output._np()


@meta("slice_backward")
def slice_backward_meta(grad_output, input_sizes, dim, start, end, step):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return TensorMeta(tuple(input_sizes), grad_output.dtype)


@impl("slice_backward")
def slice_backward_impl(out, grad_output, input_sizes, dim, start, end, step):
    array = _zeroed(out)
    where = [slice(None)] * len(input_sizes)
    # Python's slice clamps start/end exactly as aten::slice does for step > 0
    where[wrap_dim(dim, len(input_sizes))] = slice(start, min(end, INT64_MAX), step)
    array[tuple(where)] = grad_output._np()


@meta("diagonal_backward")
def diagonal_backward_meta(grad_output, input_sizes, offset, dim1, dim2):
    return TensorMeta(tuple(input_sizes), grad_output.dtype)


@impl("diagonal_backward")
def diagonal_backward_impl(out, grad_output, input_sizes, offset, dim1, dim2):
    array = _zeroed(out)
    ndim = len(input_sizes)
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    n = grad_output._shape[-1] if grad_output._shape else 0
    if n == 0:
        return
    steps = np.arange(n)
    planes = np.moveaxis(array, (d1, d2), (-2, -1))   # a writable view of ``array``
    planes[..., steps + max(-offset, 0), steps + max(offset, 0)] = grad_output._np()


@meta("unfold_backward")
def unfold_backward_meta(grad_in, input_sizes, dim, size, step):
    return TensorMeta(tuple(input_sizes), grad_in.dtype)


@impl("unfold_backward")
def unfold_backward_impl(out, grad_in, input_sizes, dim, size, step):
    """Window ``w`` covered input positions ``w*step .. w*step+size-1`` along
    ``dim``; each window element's gradient is added back at its position."""
    array = _zeroed(out)
    grad = grad_in._np()
    if not input_sizes:                      # a 0-d input unfolds into (size,)
        array[()] = grad.sum()
        return
    dim = wrap_dim(dim, len(input_sizes))
    windows = grad_in._shape[dim]
    if windows == 0:
        return
    target = np.moveaxis(array, dim, -1)      # (..., input_size)
    source = np.moveaxis(grad, dim, -2)      # (..., windows, size)
    for k in range(size):
        # for a fixed k, the windows touch distinct positions: a plain += is enough
        target[..., k:k + step * (windows - 1) + 1:step] += source[..., k]


# -- masked_scatter_backward -----------------------------------------------------------------

@meta("masked_scatter_backward")
def masked_scatter_backward_meta(grad_output, mask, sizes):
    if mask.dtype is not dt.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    return TensorMeta(tuple(sizes), grad_output.dtype)


@impl("masked_scatter_backward")
def masked_scatter_backward_impl(out, grad_output, mask, sizes):
    """The gradient of masked_scatter's ``source``: the selected gradient
    elements in order, then zeros for the source elements never used."""
    array = _zeroed(out).reshape(-1)
    shape = broadcast_shapes(grad_output._shape, mask._shape)
    selected = np.broadcast_to(grad_output._np(), shape)[np.broadcast_to(mask._np(), shape)]
    array[:selected.size] = selected[:array.size]


# -- index_add, put ----------------------------------------------------------------------------

def _index_add_check(self, dim, index, source):
    if len(index._shape) > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{len(index._shape)} with type: {index.dtype._short} and size: "
                         f"{_shape_str(index._shape)}")
    if index.dtype not in _INDEX_TYPES:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype._short}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_add_(): self ({self.dtype._short}) and source "
                           f"({source.dtype._short}) must have the same scalar type")
    dim = wrap_dim(dim, len(self._shape))
    count = index.numel()
    source_size = source._shape[dim] if source._shape else 1
    if count != source_size:
        raise RuntimeError(f"index_add_(): Number of indices ({count}) should be equal to "
                           f"source.size(dim): ({source_size}), for dim: {dim}")
    rest = lambda shape: [s for i, s in enumerate(shape) if i != dim]  # noqa: E731
    if len(source._shape) != len(self._shape) or rest(source._shape) != rest(self._shape):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_shape_str(self._shape)} "
                           f"source.shape = {_shape_str(source._shape)}")
    return dim


@meta("index_add")
@overlap_rule(inputs=assert_no_overlap)
def index_add_meta(self, dim, index, source, alpha=1):
    _index_add_check(self, dim, index, source)
    return TensorMeta(self._shape, self.dtype)


@impl("index_add")
def index_add_impl(out, self, dim, index, source, alpha=1):
    """out = self; out[..., index[i], ...] += alpha * source[..., i, ...] (repeats add up)."""
    dim = _index_add_check(self, dim, index, source)
    dst = out._np()
    if out is not self:
        np.copyto(dst, self._np())
    dst = dst.reshape(self._shape or (1,))
    idx = index._np().reshape(-1)
    if len(self._shape) <= 1:
        # ATen's 1-D loop checks each index itself; more dims go through select()
        if idx.size and (idx.min() < 0 or idx.max() >= dst.shape[dim]):
            raise IndexError("index out of range in self")
    else:
        _check_index_range(idx, dim, dst.shape[dim])
    compute = self.dtype.opmath
    values = source._np().astype(compute).reshape(
        tuple(s if i != dim else idx.size for i, s in enumerate(dst.shape)))
    if not (isinstance(alpha, (int, float)) and alpha == 1):
        values = values * np.asarray(alpha).astype(compute)
    where = [slice(None)] * dst.ndim
    where[dim] = idx
    if compute == dst.dtype:
        np.add.at(dst, tuple(where), values)
    else:                                    # float16 / bfloat16: add in float32, round once
        acc = dst.astype(compute)
        np.add.at(acc, tuple(where), values)
        dst[...] = acc


def _put_check(self, index, source):
    if index.dtype is not dt.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{index.dtype._short}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {self.dtype._short} and source.dtype = "
                           f"{source.dtype._short}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")


@meta("put")
@overlap_rule(inputs=assert_no_overlap)
def put_meta(self, index, source, accumulate=False):
    _put_check(self, index, source)
    return TensorMeta(self._shape, self.dtype, strides_for_format(self, None))


@impl("put")
def put_impl(out, self, index, source, accumulate=False):
    """Treat ``self`` as 1-D (row-major order) and write (or add) ``source`` at ``index``."""
    _put_check(self, index, source)
    n = math.prod(self._shape)
    idx = index._np().reshape(-1)
    check_flat_index(idx, n)
    flat = self._np().reshape(-1)           # row-major values (a copy if self is strided)
    values = source._np().reshape(-1)
    if accumulate:
        flat = flat.astype(self.dtype.opmath)
        np.add.at(flat, idx, values.astype(self.dtype.opmath))
    else:
        flat = flat.copy()
        flat[idx] = values
    out._np()[...] = flat.reshape(self._shape).astype(out._np().dtype)



# -- complex views ----------------------------------------------------------------------------

@kernel("view_as_real")
def view_as_real(self):
    """A complex tensor's (real, imag) pairs as a trailing dim of 2 floats."""
    if self.dtype.category != dt.COMPLEX:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    out = make_view(self, self._shape + (2,), tuple(2 * s for s in self._stride) + (1,),
                    2 * self._offset)
    out.dtype = dt._COMPLEX_TO_REAL[self.dtype]
    return out


@kernel("view_as_complex")
def view_as_complex(self):
    """The inverse: a trailing dim of 2 (contiguous) floats read as one complex."""
    complex_of = {dt.float32: dt.complex64, dt.float64: dt.complex128}
    if self.dtype not in complex_of:
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {self.dtype._short}")
    if not self._shape or self._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if self._stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in self._stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    out = make_view(self, self._shape[:-1], tuple(s // 2 for s in self._stride[:-1]),
                    self._offset // 2)
    out.dtype = complex_of[self.dtype]
    return out


@kernel("real")
def real(self):
    """The real part of a complex tensor (a view); a real tensor is returned as is."""
    if self.dtype.category != dt.COMPLEX:
        return self
    return ops.aten.select.int(ops.aten.view_as_real.default(self), -1, 0)
