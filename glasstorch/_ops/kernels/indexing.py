"""Advanced indexing and gather/scatter: ops that pick elements by index tensors.

``index.Tensor(self, [None, i, j])`` is what ``x[:, i, j]`` becomes.  The rules
(PyTorch's, which are numpy's):

* bool/byte masks become long indices first (``mask.nonzero()``, one index per
  mask dim), so a (2, 3) mask over dims 0-1 is two index vectors;
* index tensors broadcast together to one shape B;
* if the indexed dims are adjacent, B replaces them in place:
  ``x (5, 6, 7)[:, i(2, 3), j(2, 3)]`` -> (5, 2, 3); if they are separated by a
  slice, B goes first: ``x[i, :, j]`` -> (2, 3, 6).

The CPU bodies are numpy's advanced indexing (same semantics); the meta rules
compute the shapes and the output strides TensorIterator would choose.

Also here: indexed fills and copies (index_fill, index_copy), scatter_reduce,
the scatter-adds of index_select's and take's gradients (index_add, put) and
masked_scatter_backward.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import preserve_format
from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor
from ..structured import (assert_no_overlap, broadcast_shapes, elementwise_strides, empty_tensor,
                          iterator_strides, overlap_rule, TensorMeta, wrap_dim)
from . import impl, kernel, meta
from ._common import _no_meta_kernel, _not_implemented, _on_meta, _scalar_t, _sizes, _triggered_at
from ._inner import inner, inner_op, observed
from .pointwise import quiet
from .view import _zeroed, assign, compute_stride, expand_geometry, strides_for_format

_INDEX_TYPES = (dt.int64, dt.int32)
_MASK_TYPES = (dt.bool_, dt.uint8)
_NONZERO_META = ("The register_meta function for torch.nonzero() raises unimplemented by "
                 "default, as a correct data-independent implementation does not exist.")


class _Index:
    """One index after masks are expanded: shape, strides and (on CPU) values."""

    __slots__ = ("shape", "stride", "array", "device")

    def __init__(self, shape, stride, array, device):
        self.shape, self.stride, self.array, self.device = tuple(shape), tuple(stride), array, \
            device


def expand_indices(self, indices, need_values, counted=False):
    """Indices as a list of _Index | None; masks replaced by their nonzero coordinates.
    (``counted``: index_put's "too many indices" message also says how many.)"""
    out = []
    dim = 0
    ndim = len(self._shape)
    for idx in indices:
        if idx is None:
            out.append(None)
            dim += 1
            continue
        if idx.dtype in _MASK_TYPES:
            if idx.dtype is dt.uint8:
                import warnings
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                              "dtype torch.bool instead.", UserWarning, stacklevel=5)
            k = len(idx._shape)
            if dim + k > ndim:
                raise IndexError(f"too many indices for tensor of dimension {ndim}")
            for j in range(k):
                if idx._shape[j] != self._shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {_sizes(idx._shape)} at index {j} does not "
                        f"match the shape of the indexed tensor {_sizes(self._shape)} at "
                        f"index {dim + j}")
            if idx.device.type == "meta":
                if need_values:
                    raise NotImplementedError(_NONZERO_META)
                out.extend(_Index((-1,), (1,), None, idx.device) for _ in range(k))
            else:
                coords = np.nonzero(idx._np())
                if k == 0:  # x[True] / x[False]: a new dim of size 1 or 0 at the front
                    raise IndexError("0-dim mask indices are handled by the Python frontend")
                out.extend(_Index(c.shape, (1,), c, idx.device) for c in coords)
            dim += k
        elif idx.dtype in _INDEX_TYPES:
            out.append(_Index(idx._shape, idx._stride,
                              idx._np() if idx.device.type != "meta" else None, idx.device))
            dim += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if len(out) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}" +
                         (f" (got {len(out)})" if counted else ""))
    return out


def _check_bounds(self, indices):
    for d, idx in enumerate(indices):
        if idx is None or idx.array is None or idx.array.size == 0:
            continue
        size = self._shape[d]
        a = idx.array
        lo, hi = a.min(), a.max()
        if lo < -size or hi >= size:
            bad = int(hi) if hi >= size else int(lo)
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")


def _broadcast_index_shapes(indices):
    shapes = [i.shape for i in indices if i is not None]
    try:
        return broadcast_shapes(*shapes)
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         "shapes " + ", ".join(_sizes(s) for s in shapes)) from None


def index_geometry(self, indices):
    """(result shape, result strides) of self[indices] (indices already expanded)."""
    bshape = _broadcast_index_shapes(indices)
    ndim = len(self._shape)
    full = list(indices) + [None] * (ndim - len(indices))
    positions = [d for d, i in enumerate(full) if i is not None]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    shape, stride = list(self._shape), list(self._stride)
    if not adjacent:  # transposeToFront: indexed dims first
        order = positions + [d for d in range(ndim) if d not in positions]
        shape = [shape[d] for d in order]
        stride = [stride[d] for d in order]
        full = [full[d] for d in order]
        positions = list(range(len(positions)))
    before, after = positions[0], ndim - positions[-1] - 1
    out_shape = tuple(shape[:before]) + tuple(bshape) + tuple(shape[positions[-1] + 1:])
    nb = len(bshape)
    operands = [tuple(stride[:before]) + (0,) * nb + tuple(stride[positions[-1] + 1:])]
    padded = (1,) * before + tuple(bshape) + (1,) * after
    for idx in full:
        if idx is None:
            continue
        # as AdvancedIndex does: expand to the broadcast shape, reshape to
        # [1]*before + B + [1]*after; then TensorIterator zeroes the strides of
        # size-1 dims that broadcast against the output
        eshape, estride = expand_geometry(idx.shape, idx.stride, tuple(bshape))
        rstride = compute_stride(eshape, estride, padded)
        operands.append(tuple(0 if (n == 1 and o != 1) else s
                              for n, s, o in zip(padded, rstride, out_shape)))
    if len(out_shape) < 2:
        return out_shape, None
    return out_shape, iterator_strides(out_shape, operands)


def _np_index(indices):
    return tuple(slice(None) if i is None else i.array for i in indices)


@meta("index")
def index_meta(self, indices):
    expanded = expand_indices(self, indices, need_values=True)
    if all(i is None for i in expanded):
        return TensorMeta(self._shape, self.dtype, strides_for_format(self, preserve_format))
    _check_bounds(self, expanded)
    shape, stride = index_geometry(self, expanded)
    return TensorMeta(shape, self.dtype, stride)


@impl("index")
def index_impl(out, self, indices):
    expanded = expand_indices(self, indices, need_values=True)
    np.copyto(out._np(), self._np()[_np_index(expanded)])


def _values_array(values, dtype):
    if isinstance(values, Tensor):
        return values._cpu_array()
    return np.asarray(values, dtype=dtype.numpy)


@meta("index_put")
@overlap_rule(inputs=assert_no_overlap, expanded=(
    "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
    "performing this operation. This also applies to advanced indexing e.g. "
    "tensor[indices] = tensor"))
def index_put_meta(self, indices, values, accumulate=False):
    if isinstance(values, Tensor) and values.dtype is not self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{self.dtype._short} for the destination and {values.dtype._short} "
                           "for the source.")
    expanded = expand_indices(self, indices, need_values=self.device.type != "meta",
                              counted=True)
    if any(i is not None for i in expanded) and \
            not any(i is not None and -1 in i.shape for i in expanded):
        _check_bounds(self, expanded)
        shape, _ = index_geometry(self, expanded)
        vshape = values._shape if isinstance(values, Tensor) else ()
        try:
            ok = broadcast_shapes(shape, vshape) == tuple(shape)
        except RuntimeError:
            ok = False
        if not ok:
            raise RuntimeError(f"shape mismatch: value tensor of shape {_sizes(vshape)} cannot "
                               f"be broadcast to indexing result of shape {_sizes(shape)}")
    return TensorMeta(self._shape, self.dtype, strides_for_format(self, preserve_format))


@impl("index_put")
def index_put_impl(out, self, indices, values, accumulate=False):
    dst = out._np()
    if out is not self:
        np.copyto(dst, self._np())
    expanded = expand_indices(self, indices, need_values=True)
    where = _np_index(expanded)
    vals = _values_array(values, out.dtype)
    if accumulate:
        target_shape = dst[where].shape
        np.add.at(dst, where, np.broadcast_to(vals, target_shape).astype(dst.dtype))
    else:
        dst[where] = vals


# -- index_select, gather, scatter, take ---------------------------------------------

def index_select_meta(self, dim, index):
    if len(index._shape) > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in _INDEX_TYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    ndim = len(self._shape)
    dim = wrap_dim(dim, ndim)
    if ndim == 0:
        if index.numel() > 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                             f"{index.numel()} value(s)")
        return TensorMeta((), self.dtype)
    shape = self._shape[:dim] + (index.numel(),) + self._shape[dim + 1:]
    return TensorMeta(shape, self.dtype)


@kernel("index_select")
@inner_op("aten::index_select")
def index_select(self, dim, index):
    """ATen's index_select_cpu_: an ``empty`` result (resized in place, no
    dispatch); for a >1-d input its slice loop selects the first slice of
    input and result, except on the dim-1 fast path into a contiguous result
    (numpy needs no slices: they are dispatched only while observed)."""
    spec = index_select_meta(self, dim, index)
    out = inner.empty(spec.shape, dtype=spec.dtype, device=self.device)
    ndim = len(self._shape)
    dim = wrap_dim(dim, ndim)
    if observed() and ndim > 1 and index.numel() and self.numel() and dim != 1:
        inner.select(self, dim, 0)
        inner.select(out, dim, 0)
    if self.device.type == "cpu":
        _index_select_fill(out, self, dim, index)
    return out


def _index_select_fill(out, self, dim, index):
    idx = index._np().reshape(-1)
    ndim = len(self._shape)
    size = self._shape[dim] if ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError("index out of range in self")
    src = self._np() if ndim else self._np().reshape(1)
    np.copyto(out._np(), np.take(src, idx, axis=dim).reshape(out._shape))


def _ndim1(t):
    return max(len(t._shape), 1)


def _shape1(t):
    return tuple(t._shape) if t._shape else (1,)


@meta("gather")
def gather_meta(self, dim, index, sparse_grad=False):
    dim = wrap_dim(dim, len(self._shape))
    if index.numel() and index.dtype not in _INDEX_TYPES:   # (an empty index may be any dtype)
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if index.numel() and _ndim1(index) != _ndim1(self):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index.numel():
        s, i = _shape1(self), _shape1(index)
        for d in range(len(s)):
            if d != dim and i[d] > s[d]:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {_sizes(index._shape)}"
                    f" to be no larger than self {_sizes(self._shape)} apart from dimension "
                    f"{dim}")
    return TensorMeta(index._shape, self.dtype)


def _check_index_range(idx, dim, size):
    if idx.size:
        lo, hi = idx.min(), idx.max()
        if lo < 0 or hi >= size:
            bad = int(lo) if lo < 0 else int(hi)
            raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


@impl("gather")
def gather_impl(out, self, dim, index, sparse_grad=False):
    if index.numel() == 0:
        return
    dim = wrap_dim(dim, len(self._shape))
    src = self._np().reshape(_shape1(self))
    idx = index._np().reshape(_shape1(index))
    _check_index_range(idx, dim, src.shape[dim])
    window = tuple(slice(0, n) if d != dim else slice(None) for d, n in enumerate(idx.shape))
    np.copyto(out._np(), np.take_along_axis(src[window], idx, axis=dim).reshape(out._shape))


def _scatter_meta(self, dim, index, src, reduce=None, name="scatter"):
    dim = wrap_dim(dim, len(self._shape))
    if index.numel() and index.dtype not in _INDEX_TYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if index.numel():
        if _ndim1(index) != _ndim1(self):
            raise RuntimeError("Index tensor must have the same number of dimensions as self "
                               "tensor")
        if isinstance(src, Tensor) and _ndim1(src) != _ndim1(index):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        s, i = _shape1(self), _shape1(index)
        bad = any(i[d] > s[d] for d in range(len(s)) if d != dim)
        if isinstance(src, Tensor):
            bad = bad or any(a > b for a, b in zip(i, _shape1(src)))
            if bad:
                raise RuntimeError(
                    f"Expected index {_sizes(index._shape)} to be smaller than self "
                    f"{_sizes(self._shape)} apart from dimension {dim} and to be smaller size "
                    f"than src {_sizes(src._shape)}")
        elif bad:
            raise RuntimeError(f"Expected index {_sizes(index._shape)} to be smaller than self "
                               f"{_sizes(self._shape)} apart from dimension {dim}")
    return TensorMeta(self._shape, self.dtype)


def _scatter_impl(out, self, dim, index, src, reduce=None):
    dst = out._np()
    if out is not self:
        np.copyto(dst, self._np())
    if index.numel() == 0:
        return
    dim = wrap_dim(dim, len(self._shape))
    dst = dst.reshape(_shape1(self))  # a view (0-d -> 1-d) over out's memory
    idx = index._np().reshape(_shape1(index))
    _check_index_range(idx, dim, dst.shape[dim])
    where = list(np.indices(idx.shape, sparse=True))
    where[dim] = idx
    where = tuple(where)
    if isinstance(src, Tensor):
        vals = src._np().reshape(_shape1(src))[tuple(slice(0, n) for n in idx.shape)]
    else:
        vals = np.asarray(src).astype(dst.dtype)
    if reduce == "add":
        np.add.at(dst, where, np.broadcast_to(vals, idx.shape))
    elif reduce == "multiply":
        np.multiply.at(dst, where, np.broadcast_to(vals, idx.shape))
    else:
        assign_target = np.empty(idx.shape, dst.dtype)
        assign(assign_target, vals, out.dtype, src.dtype if isinstance(src, Tensor) else None)
        dst[where] = assign_target


@meta("scatter_src")
@overlap_rule(inputs=assert_no_overlap)
def scatter_src_meta(self, dim, index, src):
    return _scatter_meta(self, dim, index, src)


@impl("scatter_src")
def scatter_src_impl(out, self, dim, index, src):
    _scatter_impl(out, self, dim, index, src)


@meta("scatter_value")
@overlap_rule(inputs=assert_no_overlap)
def scatter_value_meta(self, dim, index, value):
    return _scatter_meta(self, dim, index, value)


@impl("scatter_value")
def scatter_value_impl(out, self, dim, index, value):
    _scatter_impl(out, self, dim, index, value)


@meta("scatter_reduce")
@overlap_rule(inputs=assert_no_overlap)
def scatter_reduce_meta(self, dim, index, src, reduce):
    return _scatter_meta(self, dim, index, src, reduce)


@impl("scatter_reduce")
def scatter_reduce_impl(out, self, dim, index, src, reduce):
    _scatter_impl(out, self, dim, index, src, reduce)


@meta("scatter_value_reduce")
@overlap_rule(inputs=assert_no_overlap)
def scatter_value_reduce_meta(self, dim, index, value, reduce):
    return _scatter_meta(self, dim, index, value, reduce)


@impl("scatter_value_reduce")
def scatter_value_reduce_impl(out, self, dim, index, value, reduce):
    _scatter_impl(out, self, dim, index, value, reduce)


@meta("scatter_add")
@overlap_rule(inputs=assert_no_overlap)
def scatter_add_meta(self, dim, index, src):
    return _scatter_meta(self, dim, index, src)


@impl("scatter_add")
def scatter_add_impl(out, self, dim, index, src):
    _scatter_impl(out, self, dim, index, src, "add")


@meta("take")
def take_meta(self, index):
    if index.dtype is not dt.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{index.dtype._short}")
    return TensorMeta(index._shape, self.dtype)


def check_flat_index(idx, n) -> None:
    """take/put index ``self`` as if it were 1-D: every index in [-n, n)."""
    if idx.size:
        lo, hi = idx.min(), idx.max()
        if lo < -n or hi >= n:
            bad = int(hi) if hi >= n else int(lo)
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")


@impl("take")
def take_impl(out, self, index):
    idx = index._np()
    check_flat_index(idx, self.numel())
    np.copyto(out._np(), self._np().reshape(-1)[idx])


# -- data-dependent shapes: nonzero, masked_select ------------------------------------

@kernel("nonzero")
def nonzero(self):
    """(n, ndim) int64 coordinates, stored column-major as PyTorch's CPU kernel does."""
    if self.device.type == "meta":
        raise NotImplementedError(_NONZERO_META)
    coords = np.argwhere(self._np())
    n, ndim = coords.shape[0], len(self._shape)
    out = empty_tensor((n, ndim), dt.int64, self.device, (1, max(n, 1)))
    out._np()[...] = coords
    return out


class _NonzeroStaticMeta(TensorMeta):
    """nonzero_static's out= must be int64 exactly."""

    __slots__ = ()

    def check_out(self, out_dtype):
        if out_dtype is not dt.int64:
            raise RuntimeError("nonzero_static: Expected out tensor to have scalar type Long but "
                               f"got scalar type{out_dtype._short}")


@meta("nonzero_static")
def nonzero_static_meta(self, *, size, fill_value=-1):
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return _NonzeroStaticMeta((size, len(self._shape)), dt.int64)


@impl("nonzero_static")
def nonzero_static_impl(out, self, *, size, fill_value=-1):
    """The first ``size`` of nonzero()'s coordinates (row-major order); rows past
    the nonzero count hold ``fill_value``."""
    coords = np.argwhere(self._np())[:size]
    result = out._np()
    result[: len(coords)] = coords
    result[len(coords):] = fill_value


@kernel("masked_select")
def masked_select(self, mask):
    if mask.dtype is not dt.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    if _on_meta(self, mask):
        raise _no_meta_kernel("masked_select")
    shape = broadcast_shapes(mask._shape, self._shape)     # (mask, self): PyTorch's order
    a, m = np.broadcast_to(self._np(), shape), np.broadcast_to(mask._np(), shape)
    values = a[m]
    out = empty_tensor(values.shape, self.dtype, self.device)
    out._np()[...] = values
    return out


@kernel("masked_scatter")
def masked_scatter(self, mask, source):
    """CompositeExplicitAutograd: self and mask broadcast together, self copied
    contiguous, then masked_scatter_ into the copy."""
    if mask.dtype is not dt.bool_:
        raise RuntimeError("masked_scatter_: expected BoolTensor for mask")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got {self.dtype._short} and {source.dtype._short}")
    shape = broadcast_shapes(self._shape, mask._shape)
    out = empty_tensor(shape, self.dtype, self.device)
    if self.device.type != "meta":
        np.copyto(out._np(), np.broadcast_to(self._np(), shape))
        _scatter_where(out, np.broadcast_to(mask._np(), shape), source,
                       "masked_scatter: expected source to have at least as many elements as "
                       "ones in mask")
    return out


def _scatter_where(out, m, source, too_few):
    """source's leading elements written, in order, where ``m`` is true."""
    count = int(m.sum())
    if count > source.numel():
        raise RuntimeError(too_few)
    out._np()[m] = source._np().reshape(-1)[:count]


@kernel("masked_scatter_")
def masked_scatter_(self, mask, source):
    """masked_scatter__cpu: the mask expanded to self (never self to the mask)."""
    if mask.dtype is not dt.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype._short}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{self.dtype._short} and {source.dtype._short}")
    if len(mask._shape) > len(self._shape):        # expand_inplace's error, as c10 prints it
        raise RuntimeError(f"expand(CPU{mask.dtype._short}Type{{{_sizes(mask._shape)}}}, "
                           f"size={_sizes(self._shape)}): the number of sizes provided "
                           f"({len(self._shape)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(mask._shape)})")
    m = inner.expand(mask, list(self._shape))
    if self.device.type != "meta":
        _scatter_where(self, m._np(), source, "Number of elements of source < number of ones "
                                              "in mask")
    return self


@kernel("fill_diagonal_")
def fill_diagonal_(self, fill_value, wrap=False):
    """CompositeImplicitAutograd: the main diagonal as an as_strided view filled
    (all dims equal above 2-d); a tall matrix with ``wrap`` starts again every
    width + 1 rows."""
    ndim = self.dim()
    if ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self._shape[0], self._shape[1]
    if ndim > 2 and any(n != height for n in self._shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    step = [sum(self._stride)]
    size = min(height, width)
    ops.aten.fill_.Scalar(ops.aten.as_strided.default(self, [size], step, self._offset),
                          fill_value)
    if wrap and ndim == 2 and height > width + 1:
        wrapped = (self.numel() + width) // (width + 1) - size
        start = self._offset + self._stride[0] * (width + 1)
        ops.aten.fill_.Scalar(ops.aten.as_strided.default(self, [wrapped], step, start),
                              fill_value)
    return self


# -- masked indexing (what decompositions emit for gathers that may be out of range) ----

def _clamped_indices(self, indices):
    """``indices`` clamped into [-size, size - 1] of the dim each indexes, so a
    masked-out index that is out of range still reads or writes in range."""
    for index in indices:
        if index is not None and index.dtype not in _INDEX_TYPES:
            raise RuntimeError(f"_unsafe_masked_index found unexpected index type "
                               f"{index.dtype._short}")
    return [None if index is None else ops.aten.clamp.default(index, -size, size - 1)
            for index, size in zip(indices, self._shape)]


@kernel("_unsafe_masked_index")
def _unsafe_masked_index(self, mask, indices, fill):
    """CompositeExplicitAutograd: ``where(mask, self[indices], fill)``, with
    indices clamped first, so only the places ``mask`` keeps must be in range.
    An empty ``self`` gives ``fill`` everywhere; the shape is then found by
    indexing a full tensor whose indexed empty dims have size 1 and whose
    dims past ``indices`` have size 0, as ATen builds it."""
    clamped = _clamped_indices(self, indices)
    if self.numel() == 0:
        sizes = [(1 if size == 0 else size) if index is not None else size
                 for index, size in zip(indices, self._shape)]
        sizes += [0] * (self.dim() - len(sizes))
        return ops.aten.index.Tensor(ops.aten.new_full.default(self, sizes, fill), clamped)
    result = ops.aten.index.Tensor(self, clamped)
    return ops.aten.masked_fill.Scalar(result, ops.aten.logical_not.default(mask), fill)


@kernel("_unsafe_masked_index_put_accumulate")
def _unsafe_masked_index_put_accumulate(self, mask, indices, values):
    """CompositeExplicitAutograd: ``self[indices] += where(mask, values, 0)``
    out of place, with indices clamped first (masked-out ones add 0 wherever
    they land)."""
    if self.numel() == 0:
        return ops.aten.clone.default(self)
    clamped = _clamped_indices(self, indices)
    masked = ops.aten.masked_fill.Scalar(values, ops.aten.logical_not.default(mask), 0)
    return ops.aten.index_put.default(self, clamped, masked, True)


# -- index_fill ----------------------------------------------------------------------------

def _index_fill_check(self, dim, index, value):
    wrapped = wrap_dim(dim, len(self._shape))
    if index.dtype is not dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if len(index._shape) > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value._shape:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {len(value._shape)} dimension(s).")
    return wrapped


@meta("index_fill")
@overlap_rule(inputs=assert_no_overlap)
def index_fill_meta(self, dim, index, value):
    _index_fill_check(self, dim, index, value)
    return TensorMeta(self._shape, self.dtype, elementwise_strides(self._shape, (self,)))


@impl("index_fill")
def index_fill_impl(out, self, dim, index, value):
    """A copy of ``self`` with the slices at ``index`` along ``dim`` set to ``value``."""
    dim = _index_fill_check(self, dim, index, value)
    dst = out._np()
    if out is not self:
        np.copyto(dst, self._np())
    size = self._shape[dim] if self._shape else 1
    positions = index._np().reshape(-1)
    bad = (positions < -size) | (positions >= size)
    if bad.any():
        raise IndexError(f"index {positions[bad][0]} is out of bounds for dimension {dim} with "
                         f"size {size}")
    fill = value._np() if isinstance(value, Tensor) else value
    if not self._shape:
        if positions.size:
            dst[...] = fill
        return
    target = np.moveaxis(dst, dim, 0)
    target[positions] = np.asarray(fill).astype(dst.dtype) if dst.dtype.kind != "V" else fill


# -- index_copy ----------------------------------------------------------------------------

def _index_copy_check(self, dim, index, source):
    """PyTorch's index_copy checks, in its order; returns the wrapped dim."""
    dim = wrap_dim(dim, len(self._shape))
    if len(index._shape) >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{len(index._shape)})")
    count = index.numel()
    if not source._shape and count != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {count})")
    if len(source._shape) != len(self._shape) and source._shape and self._shape:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality "
                         f"({len(source._shape)}), destination dimensionality "
                         f"({len(self._shape)})")
    if index.dtype is not dt.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{index.dtype._short}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {self.dtype._short} and (source) {source.dtype._short}")
    self_slice = [n for d, n in enumerate(self._shape) if d != dim]
    source_slice = [n for d, n in enumerate(source._shape) if d != dim]
    if self_slice != source_slice:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, self_slice))} "
                           f"at dimension {dim} and source slice shape: "
                           f"{' '.join(map(str, source_slice))} at dimension 0.")
    if source._shape and count != source._shape[dim]:
        raise IndexError(f"index_copy_(): Number of indices ({count}) should be equal to "
                         f"source.size(dim) ({source._shape[dim]})")
    return dim


@meta("index_copy")
@overlap_rule(inputs=assert_no_overlap)
def index_copy_meta(self, dim, index, source):
    _index_copy_check(self, dim, index, source)
    return TensorMeta(self._shape, self.dtype, elementwise_strides(self._shape, (self,)))


@impl("index_copy")
def index_copy_impl(out, self, dim, index, source):
    """A copy of ``self`` whose slices ``index[i]`` along ``dim`` are ``source``'s slices i
    (a repeated index keeps the last one)."""
    dim = _index_copy_check(self, dim, index, source)
    dst = out._np()
    if out is not self:
        np.copyto(dst, self._np())
    size = self._shape[dim] if self._shape else 1
    positions = index._np().reshape(-1)
    bad = (positions < 0) | (positions >= size)
    if bad.any():
        raise IndexError(f"index_copy_(): index {positions[bad][0]} is out of bounds for "
                         f"dimension {dim} with size {size}")
    if not self._shape:
        dst[...] = source._np().reshape(())
        return
    values = source._np()
    if not source._shape:
        values = values.reshape([1] * len(self._shape))
    np.moveaxis(dst, dim, 0)[positions] = np.moveaxis(values, dim, 0)


# -- scatter_reduce ------------------------------------------------------------------------

# ("max" and "min" are accepted too, undocumented, as in PyTorch; autograd refuses them)
_SCATTER_REDUCTIONS = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
                       "amin": np.minimum, "max": np.maximum, "min": np.minimum}


@meta("scatter_reduce_two")
@overlap_rule(inputs=assert_no_overlap)
def scatter_reduce_two_meta(self, dim, index, src, reduce, *, include_self=True):
    spec = _scatter_meta(self, dim, index, src)
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    return spec


def _reduction_identity(reduce, dtype):
    """What a position starts from when ``self`` is left out of its reduction."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    largest = reduce in ("amax", "max")
    if dtype.kind in "fV" or dtype.name == "bfloat16":
        return -np.inf if largest else np.inf
    if dtype.kind == "b":
        return not largest
    limits = np.iinfo(dtype)
    return limits.min if largest else limits.max


@impl("scatter_reduce_two")
@quiet
def scatter_reduce_two_impl(out, self, dim, index, src, reduce, *, include_self=True):
    """out = self, then each src[j] (at index[j] along dim) folded into its position with
    ``reduce``; mean divides by the number folded (plus one for self; floor for ints)."""
    if reduce == "mean" and self.dtype is dt.bool_:
        raise _not_implemented("scatter_gather_tensor_cpu_reduce_mean", self.dtype)
    dst = out._np()
    if out is not self:
        np.copyto(dst, self._np())
    if index.numel() == 0:
        return
    dim = wrap_dim(dim, len(self._shape))
    dst = dst.reshape(_shape1(self))
    idx = index._np().reshape(_shape1(index))
    _check_index_range(idx, dim, dst.shape[dim])
    where = list(np.indices(idx.shape, sparse=True))
    where[dim] = idx
    where = tuple(where)
    vals = src._np().reshape(_shape1(src))[tuple(slice(0, n) for n in idx.shape)]
    if not include_self:
        dst[where] = _reduction_identity(reduce, dst.dtype)
    _SCATTER_REDUCTIONS[reduce].at(dst, where, vals)
    if reduce == "mean":
        count = np.full(dst.shape, 1 if include_self else 0, np.int64)
        np.add.at(count, where, 1)
        count[count == 0] = 1
        if dst.dtype.kind in "iu":
            dst[...] = np.floor_divide(dst, count)
        else:
            dst[...] = dst / count


# -- masked_scatter_backward ---------------------------------------------------------------

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


# -- index_add, put (the scatter-adds of index_select's and take's gradients) --------------

def _index_add_check(self, dim, index, source, name="index_add_"):
    """index_func_meta_impl's checks, shared by index_add and index_reduce."""
    if len(index._shape) > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{len(index._shape)} with type: {index.dtype._short} and size: "
                         f"{_sizes(index._shape)}")
    if index.dtype not in _INDEX_TYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype._short}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): self ({self.dtype._short}) and source "
                           f"({source.dtype._short}) must have the same scalar type")
    dim = wrap_dim(dim, len(self._shape))
    count = index.numel()
    source_size = source._shape[dim] if source._shape else 1
    if count != source_size:
        raise RuntimeError(f"{name}(): Number of indices ({count}) should be equal to "
                           f"source.size(dim): ({source_size}), for dim: {dim}")
    rest = lambda shape: [s for i, s in enumerate(shape) if i != dim]  # noqa: E731
    if len(source._shape) != len(self._shape) or rest(source._shape) != rest(self._shape):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_sizes(self._shape)} "
                           f"source.shape = {_sizes(source._shape)}")
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


# -- index_reduce (TensorAdvancedIndexing.cpp's index_reduce_func_impl) ----------------------

_INDEX_REDUCE_WARNED = []
_INDEX_REDUCE_UFUNCS = {"prod": np.multiply, "mean": np.add, "amax": np.maximum,
                        "amin": np.minimum}


@meta("index_reduce")
def index_reduce_meta(self, dim, index, source, reduce, *, include_self=True):
    if reduce not in _INDEX_REDUCE_UFUNCS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    _index_add_check(self, dim, index, source, "index_reduce_")
    return TensorMeta(self._shape, self.dtype)


def _reduce_identity(reduce, d):
    """What an indexed slot starts at when self is left out (numpy dtype ``d``)."""
    if reduce in ("prod", "mean"):
        return 1 if reduce == "prod" else 0
    if not np.issubdtype(d, np.integer):          # float types, bfloat16 included
        return -np.inf if reduce == "amax" else np.inf
    return np.iinfo(d).min if reduce == "amax" else np.iinfo(d).max


@impl("index_reduce")
def index_reduce_impl(out, self, dim, index, source, reduce, *, include_self=True):
    """Each source slice folded into the slot its index names (prod, sum for
    mean, maximum, minimum: nan wins), self included or replaced by the identity;
    mean divides by the count (floor division for integers).  ATen folds slice by
    slice with the dtype's own ops (mul_stub, add_stub, ...): float16/bfloat16 round
    after every step."""
    if not _INDEX_REDUCE_WARNED:       # TORCH_WARN_ONCE
        _INDEX_REDUCE_WARNED.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time."
                      + _triggered_at("TensorAdvancedIndexing.cpp:1523"), UserWarning,
                      stacklevel=5)
    dim = wrap_dim(dim, len(self._shape))
    compute = _scalar_t(self.dtype)
    acc = np.array(self._np(), dtype=compute).reshape(self._shape or (1,))
    slots = np.moveaxis(acc, dim, 0)
    idx = index._np().reshape(-1).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= slots.shape[0]):
        raise IndexError("index out of range in self")
    values = np.moveaxis(source._np().astype(compute).reshape(
        tuple(s if i != dim else idx.size for i, s in enumerate(acc.shape))), dim, 0)
    if not include_self:
        slots[idx] = _reduce_identity(reduce, compute)
    with np.errstate(over="ignore", invalid="ignore"):     # inf and nan, silently
        _INDEX_REDUCE_UFUNCS[reduce].at(slots, idx, values)
    if reduce == "mean":
        counts = np.full(slots.shape[0], 1 if include_self else 0, dtype=np.int64)
        np.add.at(counts, idx, 1)
        counts = np.maximum(counts, 1).reshape((-1,) + (1,) * (slots.ndim - 1))
        integral = not (self.dtype.is_floating_point or self.dtype.is_complex)
        slots[...] = np.floor_divide(slots, counts) if integral else slots / counts
    np.copyto(out._np(), acc.reshape(out._shape), casting="unsafe")
