"""Tensor utilities: comparison, counting, searching and shaping ops (ATen's
TensorCompare.cpp, Unique.cpp, SummaryOps.cpp, Repeat.cpp, TensorShape.cpp,
LinearAlgebra.cpp, Cross.cpp, ReduceOps.cpp, Sorting.cpp, Bucketization.cpp,
Distance.cpp, TensorAdvancedIndexing.cpp, UnaryOps.cpp).

Where PyTorch decomposes an op (CompositeImplicitAutograd: tile, meshgrid, diag,
kron, tensordot, diff, cartesian_prod ...) the kernel here calls the same aten
ops in the same order, so autograd comes from those ops.  The others compute with
numpy and have gradient formulas in derivatives.yaml:

    equal(a, b)             same shape and values (a Python bool)
    _unique2(x)             sorted distinct values, inverse indices, counts
    bincount(x, w)          out[v] = number (or weight sum) of x == v
    repeat_interleave(r)    [0]*r[0] + [1]*r[1] + ...  (the index an interleave gathers)
    trace(m)                sum of the main diagonal
    linalg_cross(a, b, dim) 3-vector cross products along dim
    logit(x, eps)           log(x / (1 - x)), x clamped to [eps, 1 - eps]
    isposinf / isneginf     x == +inf / x == -inf
    nansum(x, dims)         sum with NaNs as zero (nanmean divides by the non-NaN count)
    cummax / cummin         running extremum and where it was taken
    searchsorted / bucketize  insertion points found by PyTorch's binary search
    index_copy(x, d, i, s)  x with slices i along d replaced by s's
    scatter_reduce          src folded into self at index (sum/prod/mean/amax/amin)
    _cdist_forward          p-norm distances between rows (cdist; p=2 may use matmul)
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import contiguous_format
from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor, is_tensor_subclass_like
from ..structured import (TensorMeta, assert_no_overlap, broadcast_shapes, elementwise_strides,
                          empty_tensor, overlap_rule, wrap_dim)
from . import impl, kernel, meta
from .indexing import _check_index_range, _scatter_meta, _shape1
from .reduction import _cascade, reduce_dims, sum_meta
from .pointwise import binary_meta, quiet, unary_float_meta, write
from .view import _shape_str

__all__ = []

aten = ops.aten


def _no_meta_kernel(name):
    """What PyTorch answers for a data-dependent op on Meta tensors."""
    return NotImplementedError(
        f"aten::{name}: attempted to run this operator with Meta tensors, but there was no fake "
        "impl or Meta kernel registered. You may have run into this message while using an "
        "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this "
        "operator with those APIs you'll need to add a fake impl. Please see the following for "
        "next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


def _not_implemented(kernel_name, d):
    """The CPU dispatch macro's error for a dtype a kernel has no loop for."""
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{d._short}\'')


def _on_meta(*tensors) -> bool:
    return any(t is not None and t.device.type == "meta" for t in tensors)


def _from_array(values, dtype, device):
    out = empty_tensor(values.shape, dtype, device)
    out._np()[...] = values
    return out


# -- comparison: equal, allclose, is_same_size ------------------------------------------

@kernel("equal")
def equal(self, other):
    """Same sizes and equal elements (NaN is unequal to itself); dtypes may differ."""
    if _on_meta(self, other):
        raise _no_meta_kernel("equal")
    if self.device != other.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {self.device} and {other.device}!")
    if self._shape != other._shape:
        return False
    return bool(np.array_equal(self._np(), other._np()))


@kernel("allclose")
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = aten.isclose.default(self, other, rtol, atol, equal_nan)
    return bool(aten._local_scalar_dense.default(aten.all.default(close)))


@kernel("is_same_size")
def is_same_size(self, other):
    return self._shape == other._shape


# -- casting and summing to a shape -------------------------------------------------------

@kernel("type_as")
def type_as(self, other):
    return aten.to.dtype_layout(self, dtype=other.dtype, layout=other.layout,
                                device=other.device)


@kernel("sum_to_size")
def sum_to_size(self, size):
    """Sum the broadcast dims away: leading dims, and dims that ``size`` holds as 1."""
    size, shape = tuple(size), self._shape
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if not size:                  # ATen's sum_to: to a scalar is sum() (bool counts: int64)
        return aten.sum.default(self)
    if size == shape:
        return self
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and shape[lead + i] != 1]
    result = aten.sum.dim_IntList(self, dims, True) if dims else self
    return aten.view.default(result, list(size)) if lead else result


# -- unique, bincount ----------------------------------------------------------------------

def _unique_runs(keys_equal_next, n):
    """Start of each run of equal sorted elements, and the run id of every element."""
    starts = np.flatnonzero(np.concatenate(([True], ~keys_equal_next))) if n else \
        np.zeros(0, np.int64)
    run_of = np.cumsum(np.concatenate(([0], (~keys_equal_next).astype(np.int64)))) if n else \
        np.zeros(0, np.int64)
    return starts, run_of


def _unique_outputs(self, values, inverse_shape, order, starts, run_of, n,
                    return_inverse, return_counts):
    device = self.device
    if return_inverse:
        inverse = np.empty(n, np.int64)
        inverse[order] = run_of
        inverse_t = _from_array(inverse.reshape(inverse_shape), dt.int64, device)
    else:
        inverse_t = empty_tensor((0,), dt.int64, device)
    if return_counts:
        counts_t = _from_array(np.diff(np.append(starts, n)).astype(np.int64), dt.int64, device)
    else:
        counts_t = empty_tensor((0,), dt.int64, device)
    return _from_array(values, self.dtype, device), inverse_t, counts_t


@kernel("_unique2")
def unique2(self, sorted=True, return_inverse=False, return_counts=False):
    """Distinct values in ascending order (PyTorch's CPU kernel sorts even when
    ``sorted=False``); NaNs are all distinct."""
    if _on_meta(self):
        raise _no_meta_kernel("_unique2")
    flat = self._np().reshape(-1)
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    equal_next = ordered[1:] == ordered[:-1]
    starts, run_of = _unique_runs(equal_next, flat.size)
    return _unique_outputs(self, ordered[starts], self._shape, order, starts, run_of,
                           flat.size, return_inverse, return_counts)


@kernel("unique_dim")
def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    """Distinct slices along ``dim``, in lexicographic order."""
    if _on_meta(self):
        raise _no_meta_kernel("unique_dim")
    dim = wrap_dim(dim, len(self._shape))
    shape = self._shape
    if self.numel() == 0 and shape[dim] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    rest = shape[:dim] + shape[dim + 1:]
    slices = np.moveaxis(self._np(), dim, 0).reshape(shape[dim], int(np.prod(rest, dtype=np.int64)))
    order = np.lexsort(slices.T[::-1]) if slices.shape[1] else np.arange(shape[dim])
    ordered = slices[order]
    equal_next = np.all(ordered[1:] == ordered[:-1], axis=1)
    starts, run_of = _unique_runs(equal_next, shape[dim])
    kept = np.moveaxis(ordered[starts].reshape((len(starts),) + rest), 0, dim)
    return _unique_outputs(self, kept, (shape[dim],), order, starts, run_of, shape[dim],
                           return_inverse, return_counts)


@kernel("bincount")
def bincount(self, weights=None, minlength=0):
    if _on_meta(self, weights):
        raise _no_meta_kernel("bincount")
    if self.dtype.category != dt.INTEGRAL:
        raise _not_implemented("bincount_cpu", self.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    values = self._np()
    if len(self._shape) != 1 or (values.size and values.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (len(weights._shape) != 1 or weights._shape[0] != values.size):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if not values.size:   # PyTorch answers int64 zeros, whatever the weights
        return aten.zeros.default([minlength], dtype=dt.int64, device=self.device)
    length = max(int(values.max()) + 1, minlength)
    if weights is None:
        return _from_array(np.bincount(values, minlength=length), dt.int64, self.device)
    out_dtype = dt.float32 if weights.dtype is dt.float32 else dt.float64
    counts = np.bincount(values, weights=weights._np().astype(np.float64), minlength=length)
    return _from_array(counts, out_dtype, self.device)


# -- repeat_interleave, tile, broadcast_to --------------------------------------------------

@kernel("repeat_interleave")
def repeat_interleave(repeats, output_size=None):
    """The indices 0..n-1, index i repeated repeats[i] times."""
    if repeats.dtype not in (dt.int32, dt.int64):
        raise _not_implemented("repeat_interleave_cpu", repeats.dtype)
    if len(repeats._shape) != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.device.type == "meta":
        if output_size is None:
            raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
        return empty_tensor((output_size,), repeats.dtype, repeats.device)
    counts = repeats._np()
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(counts.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    index = np.repeat(np.arange(counts.size, dtype=counts.dtype), counts)
    return _from_array(index, repeats.dtype, repeats.device)


@kernel("repeat_interleave_self_tensor")
def repeat_interleave_self_tensor(self, repeats, dim=None, output_size=None):
    source = self
    if dim is None:
        source, dim = aten.flatten.using_ints(self), 0
    size = source._shape[wrap_dim(dim, len(source._shape))]
    if len(repeats._shape) == 0 or (len(repeats._shape) == 1 and repeats._shape[0] == 1):
        repeats = aten.expand.default(aten.reshape.default(repeats, [1]), [size])
    elif len(repeats._shape) == 1:
        if repeats._shape[0] != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats._shape[0]} and input.size({dim}) = "
                               f"{size}")
    else:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    index = aten.repeat_interleave.Tensor(repeats, output_size=output_size)
    return aten.index_select.default(source, dim, index)


@kernel("repeat_interleave_self_int")
def repeat_interleave_self_int(self, repeats, dim=None, output_size=None):
    source = self if dim is not None else aten.flatten.using_ints(self)
    dim = wrap_dim(0 if dim is None else dim, len(self._shape))
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    expanded = list(source._shape)
    expanded.insert(dim + 1, repeats)
    source = aten.expand.default(aten.unsqueeze.default(source, dim + 1), expanded)
    source = aten.clone.default(source, memory_format=contiguous_format)
    shape = list(source._shape)
    shape[dim] *= repeats
    del shape[dim + 1]
    return aten.view.default(source, shape)


@kernel("tile")
def tile(self, dims):
    dims = list(dims)
    return aten.repeat.default(self, [1] * (len(self._shape) - len(dims)) + dims)


@kernel("broadcast_to")
def broadcast_to(self, size):
    return aten.expand.default(self, list(size))


# -- grids and products -----------------------------------------------------------------------

_MESHGRID_WARNED = []


def _triggered_at(where):
    """The suffix PyTorch's C++ warnings carry."""
    return f" (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/{where}.)"


@kernel("meshgrid")
def meshgrid(tensors):
    if not _MESHGRID_WARNED:   # TORCH_WARN_ONCE: once per process
        _MESHGRID_WARNED.append(True)
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument." + _triggered_at("TensorShape.cpp:4215"), UserWarning,
                      stacklevel=4)
    return aten.meshgrid.indexing(list(tensors), indexing="ij")


@kernel("meshgrid_indexing")
def meshgrid_indexing(tensors, *, indexing):
    """Each tensor viewed along its own dim and expanded to the grid's shape
    (``xy``: the first two dims swapped, as numpy's Cartesian indexing)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy"
    if swap and len(tensors) >= 2:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    elif not swap and indexing != "ij":
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    for t in tensors:
        if len(t._shape) > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(aten.expand.default(aten.view.default(t, view_shape), shape))
    if swap and len(grids) >= 2:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


@kernel("cartesian_prod")
def cartesian_prod(tensors):
    for t in tensors:
        if len(t._shape) != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(t._shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = aten.meshgrid.indexing(list(tensors), indexing="ij")
    return aten.stack.default([aten.flatten.using_ints(g) for g in grids], 1)


@kernel("kron")
def kron(self, other):
    """a (m, n) ⊗ b (p, q): a viewed (m, 1, n, 1) times b viewed (1, p, 1, q),
    flattened to (m*p, n*q); lower-rank operands get leading 1s."""
    ndim = max(len(self._shape), len(other._shape))
    a_shape = (1,) * (ndim - len(self._shape)) + self._shape
    b_shape = (1,) * (ndim - len(other._shape)) + other._shape
    a_view, b_view = [], []
    for m, p in zip(a_shape, b_shape):
        a_view += [m, 1]
        b_view += [1, p]
    product = aten.mul.Tensor(aten._unsafe_view.default(self, a_view),
                              aten._unsafe_view.default(other, b_view))
    return aten._unsafe_view.default(product, [m * p for m, p in zip(a_shape, b_shape)])


@kernel("tensordot")
def tensordot(self, other, dims_self, dims_other):
    """Contract dims_self of ``self`` with dims_other of ``other``: both are permuted
    to (free, contracted) / (contracted, free) matrices and multiplied with mm."""
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    contracted = 1
    a, b = self, other
    for d1, d2 in zip(dims_self, dims_other):
        s1, s2 = a._shape[wrap_dim(d1, len(a._shape))], b._shape[wrap_dim(d2, len(b._shape))]
        if s2 == 1:
            a = aten.sum.dim_IntList(a, [d1], True)
        elif s1 == 1:
            b = aten.sum.dim_IntList(b, [d2], True)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in "
                               f"dim {d1} and second has size {s2} in dim {d2}")
        else:
            contracted *= s1
    wrapped_a = {wrap_dim(d, len(a._shape)) for d in dims_self}
    wrapped_b = {wrap_dim(d, len(b._shape)) for d in dims_other}
    free_a = [i for i in range(len(a._shape)) if i not in wrapped_a]
    free_b = [i for i in range(len(b._shape)) if i not in wrapped_b]
    result_shape = [a._shape[i] for i in free_a] + [b._shape[i] for i in free_b]
    rows = int(np.prod([a._shape[i] for i in free_a], dtype=np.int64))
    cols = int(np.prod([b._shape[i] for i in free_b], dtype=np.int64))
    left = aten.reshape.default(aten.permute.default(a, free_a + list(dims_self)),
                                [rows, contracted])
    right = aten.reshape.default(aten.permute.default(b, list(dims_other) + free_b),
                                 [contracted, cols])
    return aten.reshape.default(aten.mm.default(left, right), result_shape)


# -- diagonals, trace, block_diag --------------------------------------------------------------

@kernel("diag")
def diag(self, diagonal=0):
    ndim = len(self._shape)
    if ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    if ndim == 1:
        return aten.diag_embed.default(self, diagonal)
    return aten.diagonal_copy.default(self, diagonal)


@kernel("diagonal_copy")
def diagonal_copy(self, offset=0, dim1=0, dim2=1):
    return aten.clone.default(aten.diagonal.default(self, offset, dim1, dim2),
                              memory_format=contiguous_format)


@kernel("diag_embed")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Zeros of the new shape, with ``self`` copied onto the (dim1, dim2) diagonal."""
    ndim = len(self._shape) + 1
    if wrap_dim(dim1, ndim) == wrap_dim(dim2, ndim):
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    dim1, dim2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    shape = list(self._shape[:-1])
    length = abs(offset) + self._shape[-1]
    shape.insert(min(dim1, dim2), length)
    shape.insert(max(dim1, dim2), length)
    result = aten.zeros.default(shape, dtype=self.dtype, device=self.device)
    aten.copy_.default(aten.diagonal.default(result, offset, dim1, dim2), self)
    return result


@meta("trace")
def trace_meta(self):
    if len(self._shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{len(self._shape)}")
    if self.dtype is dt.bool_:
        raise _not_implemented("trace", self.dtype)
    return TensorMeta((), dt.int64 if self.dtype.category == dt.INTEGRAL else self.dtype)


@impl("trace")
def trace_impl(out, self):
    d = np.diagonal(self._np())
    out._np()[...] = d.sum(dtype=out.dtype.opmath)


@kernel("trace_backward")
def trace_backward(grad, sizes):
    """The gradient on the diagonal of a zero matrix of ``sizes``."""
    if len(sizes) != 2:
        raise RuntimeError("expected matrix input")
    rows, cols = sizes
    flat = aten.zeros.default([rows * cols], dtype=grad.dtype, device=grad.device)
    diagonal = aten.arange.start_step(0, rows * cols, cols + 1, dtype=dt.int64,
                                      device=grad.device)
    if is_tensor_subclass_like(grad):                       # (a batched grad: out of place)
        flat = aten.index_fill.int_Tensor(flat, 0, diagonal, grad)
    else:
        aten.index_fill_.int_Tensor(flat, 0, diagonal, grad)
    return aten.view.default(flat, list(sizes))


@kernel("block_diag")
def block_diag(tensors):
    if not tensors:
        return aten.empty.memory_format([1, 0])
    dtype = tensors[0].dtype
    for i, t in enumerate(tensors):
        dtype = dt.promote_types(dtype, t.dtype)
        if t.device != tensors[0].device:
            raise RuntimeError(f"torch.block_diag: input tensors must all be on the same device. "
                               f"Input 0 is on device {tensors[0].device} and input {i} is on "
                               f"device {t.device}")
        if len(t._shape) > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {len(t._shape)} dimensions")
    blocks = [t if len(t._shape) == 2 else
              aten.expand.default(t, [1, t._shape[0] if t._shape else 1]) for t in tensors]
    rows = sum(b._shape[0] for b in blocks)
    cols = sum(b._shape[1] for b in blocks)
    result = aten.zeros.default([rows, cols], dtype=dtype, device=tensors[0].device)
    row = col = 0
    for b in blocks:
        m, n = b._shape
        window = aten.slice.Tensor(aten.slice.Tensor(result, 0, row, row + m), 1, col, col + n)
        aten.copy_.default(window, b)
        row, col = row + m, col + n
    return result


# -- cross, rot90, ravel, atleast_nd, diff ---------------------------------------------------

_CROSS_WARNED = []


@kernel("cross")
def cross(self, other, dim=None):
    if dim is None:
        if not _CROSS_WARNED:   # TORCH_WARN_ONCE
            _CROSS_WARNED.append(True)
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                          "Please either pass the dim explicitly or simply use "
                          "torch.linalg.cross.\nThe default value of dim will change to agree "
                          "with that of linalg.cross in a future release."
                          + _triggered_at("Cross.cpp:63"), UserWarning, stacklevel=4)
        if 3 not in self._shape:
            raise RuntimeError("no dimension of size 3 in input")
        dim = self._shape.index(3)
    return aten.linalg_cross.default(self, other, dim=dim)


@meta("linalg_cross")
def linalg_cross_meta(self, other, *, dim=-1):
    if len(self._shape) != len(other._shape):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    ndim = len(self._shape)
    wrapped = wrap_dim(dim, ndim)
    if self._shape[wrapped] != 3 or other._shape[wrapped] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self._shape[wrapped]} and {other._shape[wrapped]}")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype._short} but found "
                           f"{other.dtype._short}")
    return TensorMeta(broadcast_shapes(self._shape, other._shape), self.dtype)


@impl("linalg_cross")
def linalg_cross_impl(out, self, other, *, dim=-1):
    axis = wrap_dim(dim, len(self._shape))
    compute = self.dtype.opmath
    out._np()[...] = np.cross(self._np().astype(compute, copy=False),
                              other._np().astype(compute, copy=False), axis=axis)


@kernel("rot90")
def rot90(self, k=1, dims=(0, 1)):
    ndim = len(self._shape)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == ndim:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    wrap_dim(d0, ndim)
    wrap_dim(d1, ndim)
    k %= 4
    if k == 1:
        return aten.transpose_.default(aten.flip.default(self, [d1]), d0, d1)
    if k == 2:
        return aten.flip.default(self, [d0, d1])
    if k == 3:
        return aten.transpose_.default(aten.flip.default(self, [d0]), d0, d1)
    return aten.clone.default(self, memory_format=contiguous_format)


@kernel("ravel")
def ravel(self):
    return aten.view.default(aten.contiguous.default(self), [-1])


def _atleast(self, ndim):
    rank = len(self._shape)
    if rank == 0:
        return aten.reshape.default(self, [1] * ndim)
    if ndim == 2 and rank == 1:
        return aten.unsqueeze.default(self, 0)
    if ndim == 3 and rank == 1:
        return aten.unsqueeze.default(aten.unsqueeze.default(self, 0), -1)
    if ndim == 3 and rank == 2:
        return aten.unsqueeze.default(self, -1)
    return self


for _ndim in (1, 2, 3):
    kernel(f"atleast_{_ndim}d")(lambda self, _n=_ndim: _atleast(self, _n))
    kernel(f"atleast_{_ndim}d_sequence")(
        lambda tensors, _n=_ndim: [_atleast(t, _n) for t in tensors])


@kernel("diff")
def diff(self, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along dim (logical_xor for bool), after joining
    prepend / self / append."""
    if len(self._shape) < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for extra in (prepend, append):
        if extra is not None and len(extra._shape) != len(self._shape):
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if n and (prepend is not None or append is not None):
        parts = [t for t in (prepend, self, append) if t is not None]
        self = aten.cat.default(parts, dim)
    if n == 0:
        return aten.copy_.default(aten.zeros_like.default(self), self)
    length = self._shape[wrap_dim(dim, len(self._shape))]
    result = self
    for _ in range(min(n, length)):
        later = aten.slice.Tensor(result, dim, 1, length)
        earlier = aten.slice.Tensor(result, dim, 0, length - 1)
        if result.dtype is dt.bool_:
            result = aten.logical_xor.default(later, earlier)
        else:
            result = aten.sub.Tensor(later, earlier)
        length -= 1
    return result


# -- index_fill ---------------------------------------------------------------------------

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


# -- elementwise: logit, isposinf / isneginf, deg2rad / rad2deg ---------------------------

@meta("logit")
def logit_meta(self, eps=None):
    return unary_float_meta(self)


@impl("logit")
@quiet
def logit_impl(out, self, eps=None):
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0 is given.
    Each step rounds to the result dtype (float16/bfloat16 too), as PyTorch's loop does."""
    compute = out.dtype.numpy
    x = self._np().astype(compute)
    if eps is not None and eps >= 0:
        x = np.clip(x, compute.type(eps), compute.type(1 - eps)).astype(compute, copy=False)
    write(out, np.log(x / (compute.type(1) - x)))


@meta("logit_backward")
def logit_backward_meta(grad_output, self, eps=None):
    return binary_meta(grad_output, self)


@impl("logit_backward")
@quiet
def logit_backward_impl(out, grad_output, self, eps=None):
    """grad / (x (1 - x)); outside [eps, 1 - eps] zero, or (no eps) outside [0, 1] NaN."""
    compute = out.dtype.opmath
    g, x = grad_output._np().astype(compute), self._np().astype(compute)
    if eps is None or eps < 0:
        outside, fill = (x < 0) | (x > 1), np.nan
    else:
        outside, fill = (x < eps) | (x > 1 - eps), 0
    write(out, np.where(outside, fill, g / (x * (1 - x))))


class _BoolOnlyMeta(TensorMeta):
    """A bool result whose out= tensor must be bool too (isposinf, isneginf)."""

    __slots__ = ("op_name",)

    def check_out(self, out_dtype):
        if out_dtype is not dt.bool_:
            raise RuntimeError(f"{self.op_name} does not support non-boolean outputs.")


def _signed_inf_test(name, sign):
    @meta(name)
    def test_meta(self):
        if self.dtype.category == dt.COMPLEX:
            raise RuntimeError(f"{name} does not support complex inputs.")
        spec = _BoolOnlyMeta(self._shape, dt.bool_, elementwise_strides(self._shape, (self,)))
        spec.op_name = name
        return spec

    @impl(name)
    def test_impl(out, self):
        a = self._np()
        if self.dtype.category >= dt.FLOATING:
            write(out, a == sign * np.inf)
        else:
            out._np()[...] = False
    test_meta.__name__, test_impl.__name__ = f"{name}_meta", f"{name}_impl"


_signed_inf_test("isposinf", 1)
_signed_inf_test("isneginf", -1)


def _angle_conversion(name, factor):
    """deg2rad / rad2deg (CompositeExplicitAutograd): a multiplication by ``factor``,
    integer and bool inputs turned into the default float dtype first."""
    def as_float(self):
        if self.dtype.category == dt.COMPLEX:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        if self.dtype.category < dt.FLOATING:
            return aten._to_copy.default(self, dtype=dt.get_default_dtype())
        return self

    @kernel(name)
    def convert(self):
        return aten.mul.Tensor(as_float(self), factor)

    @kernel(f"{name}_")
    def convert_(self):
        if self.dtype.category == dt.COMPLEX:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        return aten.mul_.Tensor(self, factor)
    convert.__name__, convert_.__name__ = name, f"{name}_"


_angle_conversion("deg2rad", math.pi / 180)
_angle_conversion("rad2deg", 180 / math.pi)


# -- NaN-ignoring reductions: nansum, nanmean -----------------------------------------------

meta("nansum")(sum_meta)


@impl("nansum")
def nansum_impl(out, self, dim=None, keepdim=False, *, dtype=None):
    """sum with NaNs counted as zero (integer inputs have none: a plain sum)."""
    if self.dtype.category == dt.COMPLEX:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    acc = out.dtype.opmath
    if out.dtype in (dt.float32, dt.float64) and isinstance(self._np(), np.ndarray):
        _cascade(out, self, self._np(), acc, reduce_dims(self, dim), nan=True)   # ATen's order
        return
    a = self._np().astype(acc, copy=False)
    if acc.kind in "fc":
        a = np.where(np.isnan(a), acc.type(0), a)
    dims = reduce_dims(self, dim)
    axis = None if len(dims) == a.ndim else dims
    out._np()[...] = np.add.reduce(a, axis=axis, dtype=acc, keepdims=keepdim)


@kernel("nanmean")
def nanmean(self, dim=None, keepdim=False, *, dtype=None):
    """nansum / (number of non-NaN elements), over the same dims."""
    if self.dtype.category < dt.FLOATING:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {self.dtype._short}")
    values = aten.detach.default(self)
    counted = aten.logical_not_.default(aten.ne.Tensor(values, values))
    count = aten.sum.dim_IntList(counted, dim, keepdim)
    return aten.div.Tensor(aten.nansum.default(self, dim, keepdim, dtype=dtype), count)


# -- running extrema: cummax, cummin ---------------------------------------------------------

def _running_extremum(name, accumulate):
    @meta(name)
    def extremum_meta(self, dim):
        wrap_dim(dim, len(self._shape))
        if self.dtype.category == dt.COMPLEX:
            raise _not_implemented(f"{name}_cpu", self.dtype)
        return (TensorMeta(self._shape, self.dtype), TensorMeta(self._shape, dt.int64))

    @impl(name)
    def extremum_impl(outs, self, dim):
        """values[i] = extremum of x[..i]; indices[i] = the last position where the
        running extremum was taken (ties move it forward; NaN, once seen, stays)."""
        values, indices = outs
        if not self._shape:
            values._np()[...] = self._np()
            indices._np()[...] = 0
            return
        axis = wrap_dim(dim, len(self._shape))
        x = self._np()
        if x.dtype.name == "bfloat16":
            x = x.astype(np.float32)
        running = accumulate(x, axis=axis)
        taken = running == x
        if x.dtype.kind in "fc":
            taken |= np.isnan(x)
        positions = np.arange(x.shape[axis]).reshape([-1] + [1] * (x.ndim - axis - 1))
        values._np()[...] = running
        indices._np()[...] = np.maximum.accumulate(np.where(taken, positions, 0), axis=axis)
    extremum_meta.__name__, extremum_impl.__name__ = f"{name}_meta", f"{name}_impl"


_running_extremum("cummax", np.maximum.accumulate)
_running_extremum("cummin", np.minimum.accumulate)


@kernel("cummaxmin_backward")
def cummaxmin_backward(grad, input, indices, dim):
    """Each gradient goes to the input element its running extremum came from."""
    if input.numel() == 0:
        return input
    zeros = aten.zeros.default(list(input._shape), dtype=input.dtype, layout=input.layout,
                               device=input.device)
    return aten.scatter_add.default(zeros, dim, indices, grad)


# -- binary search: searchsorted, bucketize ------------------------------------------------

class _SearchMeta(TensorMeta):
    """An index result whose out= tensor must be int32 (out_int32) or int64."""

    __slots__ = ("out_int32",)

    def check_out(self, out_dtype):
        if out_dtype is not self.dtype:
            raise RuntimeError(
                "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) "
                "or Long(int64) depending on whether out_int32 flag is True, but we got output "
                f"tensor's dtype {out_dtype._short} and out_int32 flag is {self.out_int32}")


def _scalar_shape(value):
    return value._shape if isinstance(value, Tensor) else ()


def _searchsorted_check(boundaries, value, right, side, sorter):
    """PyTorch's searchsorted_pre_check, in its order."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side != "right":
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to "
                               f"opposites, got side of {side} while right was True")
    if sorter is not None:
        if sorter._shape != boundaries._shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {_shape_str(boundaries._shape)}"
                               f"and got sorter tensor {_shape_str(sorter._shape)}")
        if sorter.dtype is not dt.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {sorter.dtype._short}")
    shape, rank = _scalar_shape(value), len(boundaries._shape)
    if not shape and rank != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({rank}) and input value's dim(0) numel(1)")
    if rank == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if rank != 1 and (rank != len(shape) or boundaries._shape[:-1] != shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{_shape_str(boundaries._shape)} and input value tensor "
                           f"{_shape_str(shape)}")


def _search_meta(value, out_int32):
    spec = _SearchMeta(_scalar_shape(value), dt.int32 if out_int32 else dt.int64)
    spec.out_int32 = out_int32
    return spec


def _search_into(out, boundaries, value, right, sorter):
    """Fill ``out`` with the insertion points of ``value`` in the (last dim of the)
    sorted ``boundaries`` (left: first position not below it; right: first above)."""
    b = boundaries._np()
    v = value._np() if isinstance(value, Tensor) else np.asarray(value)
    common = np.result_type(b, v)
    if common.name in ("bool", "bfloat16", "float16") or common.kind in "cV":
        shown = dt.promote_types(boundaries.dtype, _value_dtype(value))
        if shown is dt.bool_ or shown.category == dt.COMPLEX:
            raise _not_implemented("searchsorted_out_cpu", shown)
        common = np.dtype(np.float32)
    b, v = b.astype(common, copy=False), v.astype(common, copy=False)
    if sorter is not None:
        order = sorter._np()
        if order.size and (order.min() < 0 or order.max() >= b.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        b = np.take_along_axis(b, order, -1)
    rows = math.prod(b.shape[:-1])     # 1-d boundaries: one row for all values
    bounds = b.reshape(rows, b.shape[-1])
    wanted = v.reshape(1, v.size) if b.ndim == 1 else v.reshape(rows, v.shape[-1])
    out._np()[...] = _binary_search(bounds, wanted, right).reshape(out._shape)


def _binary_search(bounds, wanted, right):
    """PyTorch's lower/upper bound loop, run on every value at once (so that NaNs land
    where PyTorch's comparisons put them): move right while not (mid >= value), or
    not (mid > value) for ``right``."""
    start = np.zeros(wanted.shape, np.int64)
    end = np.full(wanted.shape, bounds.shape[-1], np.int64)
    active = start < end
    while active.any():
        mid = start + ((end - start) >> 1)
        mid_value = np.take_along_axis(bounds, np.minimum(mid, bounds.shape[-1] - 1), -1)
        go_right = ~(mid_value > wanted) if right else ~(mid_value >= wanted)
        start = np.where(active & go_right, mid + 1, start)
        end = np.where(active & ~go_right, mid, end)
        active = start < end
    return start


def _value_dtype(value):
    return value.dtype if isinstance(value, Tensor) else dt.scalar_dtype(value)


@meta("searchsorted")
def searchsorted_meta(sorted_sequence, self, *, out_int32=False, right=False, side=None,
                      sorter=None):
    _searchsorted_check(sorted_sequence, self, right, side, sorter)
    return _search_meta(self, out_int32)


@impl("searchsorted")
def searchsorted_impl(out, sorted_sequence, self, *, out_int32=False, right=False, side=None,
                      sorter=None):
    _search_into(out, sorted_sequence, self, right or side == "right", sorter)


@meta("bucketize")
def bucketize_meta(self, boundaries, *, out_int32=False, right=False):
    if len(boundaries._shape) != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got "
                           f"dim({len(boundaries._shape)})")
    return _search_meta(self, out_int32)


@impl("bucketize")
def bucketize_impl(out, self, boundaries, *, out_int32=False, right=False):
    _search_into(out, boundaries, self, right, None)


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


# -- pairwise distances: cdist ---------------------------------------------------------------

def _cdist_shape_check(x1, x2):
    for name, x in (("X1", x1), ("X2", x2)):
        if len(x._shape) < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{len(x._shape)}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1._shape[-1]} X2: {x2._shape[-1]}")


def _cdist_layout(x1, x2, p, compute_mode):
    """cdist_impl's checks; the broadcast batch dims and the result's shape."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.category != dt.FLOATING:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{x.dtype._short}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = 0 if compute_mode is None else compute_mode
    if not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")
    batch = broadcast_shapes(x1._shape[:-2], x2._shape[:-2])
    return batch, batch + (x1._shape[-2], x2._shape[-2])


def _uses_matmul(p, compute_mode, rows1, rows2):
    """Whether p=2 distances take the matmul route (_euclidean_dist)."""
    mode = 0 if compute_mode is None else compute_mode
    return p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25)))


@kernel("cdist")
def cdist(x1, x2, p=2.0, compute_mode=None):
    """p-norm distances between the rows of x1 and x2 (batched): _cdist_forward, or for
    p=2 on many rows ||a||^2 - 2 a.b + ||b||^2 through _euclidean_dist (its own gradient)."""
    _cdist_shape_check(x1, x2)
    rows1, rows2, cols = x1._shape[-2], x2._shape[-2], x1._shape[-1]
    if x1.numel() == 0 or x2.numel() == 0 or not _uses_matmul(p, compute_mode, rows1, rows2):
        return aten._cdist_forward.default(x1, x2, p, compute_mode)
    batch, shape = _cdist_layout(x1, x2, p, compute_mode)
    count = math.prod(batch)
    flat1 = aten.view.default(aten.contiguous.default(
        aten.expand.default(x1, list(batch) + [rows1, cols])), [count, rows1, cols])
    flat2 = aten.view.default(aten.contiguous.default(
        aten.expand.default(x2, list(batch) + [rows2, cols])), [count, rows2, cols])
    dist = aten._euclidean_dist.default(x1, x2) if count == 1 else \
        aten._euclidean_dist.default(flat1, flat2)
    return aten.view.default(dist, list(shape))


@kernel("_euclidean_dist")
def _euclidean_dist(x1, x2):
    """sqrt(max(0, [-2 a, |a|^2, 1] . [b, 1, |b|^2])): all distances with one matmul."""
    norm1 = aten.sum.dim_IntList(aten.pow.Tensor_Scalar(x1, 2), [-1], True)
    norm2 = aten.sum.dim_IntList(aten.pow.Tensor_Scalar(x2, 2), [-1], True)
    rows1 = aten.cat.default([aten.mul.Tensor(x1, -2), norm1, aten.ones_like.default(norm1)], -1)
    rows2 = aten.cat.default([x2, aten.ones_like.default(norm2), norm2], -1)
    squared = aten.matmul.default(rows1, aten.transpose.int(rows2, -2, -1))
    return aten.sqrt_.default(aten.clamp_min_.default(squared, 0))


def _pairwise_differences(x1, x2, batch):
    """x1[..., i, :] - x2[..., j, :] for all i, j, computed in x1's dtype."""
    a = np.broadcast_to(x1._np(), batch + x1._shape[-2:])
    b = np.broadcast_to(x2._np(), batch + x2._shape[-2:])
    return a[..., :, None, :] - b[..., None, :, :]


def _check_cdist_kernel_dtypes(x1, x2):
    """The CPU loop's dtype dispatch (float32 / float64 only, one dtype)."""
    if x1.dtype not in (dt.float32, dt.float64):
        raise _not_implemented("cdist", x1.dtype)
    if x2.dtype is not x1.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype._short} but found {x2.dtype._short}")


@meta("_cdist_forward")
def _cdist_forward_meta(x1, x2, p, compute_mode):
    _cdist_shape_check(x1, x2)
    return TensorMeta(_cdist_layout(x1, x2, p, compute_mode)[1], x1.dtype)


@impl("_cdist_forward")
@quiet
def _cdist_forward_impl(out, x1, x2, p, compute_mode):
    batch, shape = _cdist_layout(x1, x2, p, compute_mode)
    if out.numel() == 0:
        return
    if x1._shape[-1] == 0:
        out._np()[...] = 0
        return
    if _uses_matmul(p, compute_mode, x1._shape[-2], x2._shape[-2]):
        out._np()[...] = aten.cdist.default(x1, x2, p, compute_mode)._np()
        return
    _check_cdist_kernel_dtypes(x1, x2)
    size = np.abs(_pairwise_differences(x1, x2, batch))
    if p == 0:
        dist = np.count_nonzero(size, axis=-1)
    elif p == 1:
        dist = size.sum(-1)
    elif p == 2:
        dist = np.sqrt(np.square(size).sum(-1))
    elif math.isinf(p):
        dist = size.max(-1, initial=0)
    else:
        dist = np.power(np.power(size, p).sum(-1), 1 / p)
    write(out, dist)


@meta("_cdist_backward")
def _cdist_backward_meta(grad, x1, x2, p, cdist):
    batch = broadcast_shapes(x1._shape[:-2], x2._shape[:-2])
    return TensorMeta(batch + x1._shape[-2:], x1.dtype)


@impl("_cdist_backward")
@quiet
def _cdist_backward_impl(out, grad, x1, x2, p, cdist):
    """d dist(i, j) / d x1[i] summed over j with grad's weights (0 where dist is 0)."""
    batch = out._shape[:-2]
    if out.numel() == 0 or p == 0 or x2._shape[-2] == 0:
        out._np()[...] = 0
        return
    diff = _pairwise_differences(x1, x2, batch)
    dist = cdist._np()[..., None]
    weight = grad._np()[..., None]
    sign, size = np.sign(diff), np.abs(diff)
    if p == 1:
        slope = sign
    elif math.isinf(p):
        slope = sign * (size == dist)
    elif p == 2:
        slope = np.where(dist == 0, 0, diff / dist)
    elif p < 2:
        zero = (dist == 0) | ((diff == 0) & (p < 1))
        slope = np.where(zero, 0, sign * np.power(size, p - 1) / np.power(dist, p - 1))
    else:
        slope = np.where(dist == 0, 0, diff * np.power(size, p - 2) / np.power(dist, p - 1))
    write(out, (slope * weight).sum(-2))
