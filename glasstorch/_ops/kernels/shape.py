"""Shape ops that copy (ATen's TensorShape.cpp, Repeat.cpp, ReduceOps.cpp's diff):
the non-view half of the "views, shape ops, copies, joining" family (views:
view.py; cat and stack: join.py).

Where PyTorch decomposes an op (CompositeImplicitAutograd: tile, meshgrid, diag,
cartesian_prod, diff, rot90 ...) the kernel here calls the same aten ops in the
same order, so autograd comes from those ops:

    repeat_interleave(r)    [0]*r[0] + [1]*r[1] + ...  (the index an interleave gathers)
    tile / broadcast_to     repeat / expand
    meshgrid, cartesian_prod  views of expanded inputs, stacked
    diag / diag_embed       a vector on a diagonal, or a diagonal copied out
    block_diag              matrices placed along a diagonal
    rot90, ravel, diff      flips and transposes, flatten, n-th differences
"""
from __future__ import annotations

import warnings

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import contiguous_format
from ..._dispatcher.dispatcher import ops
from ..structured import empty_tensor, wrap_dim
from . import kernel
from ._common import _from_array, _not_implemented, _sizes, _triggered_at

__all__ = []

aten = ops.aten


# -- same size, casting and summing to a shape ---------------------------------------------

@kernel("is_same_size")
def is_same_size(self, other):
    return self._shape == other._shape


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


# -- repeat_interleave, tile, broadcast_to -------------------------------------------------

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


# -- grids: meshgrid, cartesian_prod -------------------------------------------------------

_MESHGRID_WARNED = []



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
            raise RuntimeError(f"Expect a 1D vector, but got shape {_sizes(t._shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = aten.meshgrid.indexing(list(tensors), indexing="ij")
    return aten.stack.default([aten.flatten.using_ints(g) for g in grids], 1)


# -- diagonals -----------------------------------------------------------------------------

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


# -- block_diag ----------------------------------------------------------------------------

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


# -- rot90, ravel, atleast_nd, diff --------------------------------------------------------

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
