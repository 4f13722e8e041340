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
from ..._tensor import Tensor
from ..structured import broadcast_shapes, empty_tensor, wrap_dim
from . import kernel
from ._common import _from_array, _not_implemented, _sizes, _triggered_at
from .view_copy import _multi_view_copy_out_kernel

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


# -- gradient (ReduceOps.cpp) ---------------------------------------------------------------

def _gradient_check(self, n_spacing, dims, edge_order):
    """pre_check_gradient, in its order: ``n_spacing`` is how many spacings were
    given (None: unspecified), ``dims`` the dims asked for (None: all)."""
    if self.dtype is dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    ndim = len(self._shape)
    if n_spacing is not None and dims is None and n_spacing != ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
            f"of length {n_spacing}")
    if n_spacing is not None and dims is not None and n_spacing != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length "
            f"{n_spacing} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    seen = set()
    for d in dims if dims is not None else ():
        wrapped = wrap_dim(d, ndim)
        if wrapped in seen:
            raise RuntimeError(f"dim {wrapped} appears multiple times in the list of dims")
        seen.add(wrapped)
    for d in dims if dims is not None else range(ndim):
        if self._shape[wrap_dim(d, ndim)] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")


def _ends(self, d):
    """The slices of ``self`` along ``d`` the difference formulas read: ``part(i, j)``
    is ``self[..., i:j, ...]`` with negative positions counted from the end."""
    n = self._shape[d]
    return lambda i, j: aten.slice.Tensor(self, d, i % n if i < 0 else i,
                                          n if j is None else (j % n if j < 0 else j))


def _gradient_uniform(self, spacing, dims, edge_order):
    """gradient_helper_float: central differences inside, one-sided (first or
    second order) at the two ends, for a uniform step per dim."""
    result = []
    for d, h in zip(dims, spacing):
        d = wrap_dim(d, len(self._shape))
        part = _ends(self, d)
        center = (part(2, None) - part(0, -2)) / h
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / h
            last = (part(-1, None) - part(-2, -1)) / h
        else:
            first = (part(0, 1) * -1.5 + part(1, 2) * 2 - part(2, 3) * 0.5) / h
            last = (part(-3, -2) * 0.5 - part(-2, -1) * 2 + part(-1, None) * 1.5) / h
        result.append(aten.cat.default([first, center / 2, last], d))
    return result


def _gradient_coordinates(self, coordinates, dims, edge_order):
    """gradient_helper: the same for steps given by each dim's coordinates
    (second-order accurate inside for uneven steps)."""
    for c in coordinates:
        if c.device != self.device:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, "
                               f"but got devices {self.device} and {c.device}!")
    result = []
    for d, coords in zip(dims, coordinates):
        if coords.dim() != 1:
            raise RuntimeError("torch.gradient expected each element of spacing to have one "
                               f"dimension, but got an element with {coords.dim()} dimensions!")
        d = wrap_dim(d, len(self._shape))
        part = _ends(self, d)
        shape = [1] * len(self._shape)
        shape[d] = -1
        dx = aten.diff.default(coords, 1, 0)
        dx1, dx2 = dx[:-1], dx[1:]
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        center = a * part(0, -2) + b * part(1, -1) + c * part(2, None)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / dx[0]
            last = (part(-1, None) - part(-2, -1)) / dx[-1]
        else:
            h0, h1, g1, g2 = dx[0], dx[1], dx[-1], dx[-2]
            first = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * part(0, 1)
                     + (h0 + h1) / (h0 * h1) * part(1, 2)
                     + (-h0) / (h1 * (h0 + h1)) * part(2, 3))
            last = (g1 / (g2 * (g1 + g2)) * part(-3, -2)
                    + -(g1 + g2) / (g1 * g2) * part(-2, -1)
                    + (2 * g1 + g2) / (g1 * (g1 + g2)) * part(-1, None))
        result.append(aten.cat.default([first, center, last], d))
    return result


@kernel("gradient")
def gradient(self, *, spacing=None, dim=None, edge_order=1):
    """CompositeImplicitAutograd (all seven overloads): the derivative estimate
    along each asked dim (all of them by default), one tensor per dim.  ``spacing``
    is a step for every dim, one step per dim, or one coordinates tensor per dim."""
    dims = list(dim) if isinstance(dim, (list, tuple)) else None if dim is None else [dim]
    steps = list(spacing) if isinstance(spacing, (list, tuple)) else None
    if steps is None:       # one step (1 when not given) for every dim asked for
        count = len(dims) if dims is not None else len(self._shape)
        given = count if spacing is not None or isinstance(dim, (list, tuple)) else None
        _gradient_check(self, given, dims, edge_order)
        steps = [1.0 if spacing is None else spacing] * count
    else:
        _gradient_check(self, len(steps), dims, edge_order)
    dims = dims if dims is not None else list(range(len(self._shape)))
    if steps and isinstance(steps[0], Tensor):
        return _gradient_coordinates(self, steps, dims, edge_order)
    return _gradient_uniform(self, steps, dims, edge_order)


# -- fliplr, flipud, column_stack, dstack, diagflat, inner, argwhere, take_along_dim -------

@kernel("fliplr")
def fliplr(self):
    if len(self._shape) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return aten.flip.default(self, [1])


@kernel("flipud")
def flipud(self):
    if len(self._shape) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return aten.flip.default(self, [0])


@kernel("column_stack")
def column_stack(tensors):
    """Scalars and vectors become columns, then hstack."""
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [aten.reshape.default(t, [t.numel(), 1]) if len(t._shape) <= 1 else t
               for t in tensors]
    return aten.hstack.default(columns)


@kernel("dstack")
def dstack(tensors):
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return aten.cat.default([_atleast(t, 3) for t in tensors], 2)


@kernel("diagflat")
def diagflat(self, offset=0):
    """The flattened input on a diagonal of a square matrix."""
    return aten.diag.default(aten.view.default(aten.contiguous.default(self), [-1]), offset)


@kernel("inner")
def inner(self, other):
    """Sum over the last dims of both (a product when either is a scalar)."""
    if not self._shape or not other._shape:
        return aten.mul.Tensor(self, other)
    if self._shape[-1] != other._shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(self._shape)} and {list(other._shape)}")
    return aten.tensordot.default(self, other, [-1], [-1])


@kernel("argwhere")
def argwhere(self):
    return aten.nonzero.default(self)


def _take_along_dim_operands(self, indices, dim):
    """The input flattened (no dim), or both broadcast but along ``dim``, the indices
    wrapped into that dim."""
    if indices.dtype is not dt.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype._short}")
    if dim is None:
        return aten.view.default(self, [-1]), 0, aten.view.default(indices, [-1])
    dim = wrap_dim(dim, len(self._shape))
    if len(self._shape) != len(indices._shape):
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {len(self._shape)} dimensions for "
                           f"input, and {len(indices._shape)} dimensions for indices")
    sizes = list(self._shape)
    sizes[dim] = indices._shape[dim]
    shape = list(broadcast_shapes(tuple(sizes), indices._shape))
    indices = aten.broadcast_to.default(indices, shape)
    shape[dim] = self._shape[dim]
    # negative (and past-the-end) indices wrap around: a remainder by the dim's size
    indices = aten.remainder.Scalar(indices, self._shape[dim])
    return aten.broadcast_to.default(self, shape), dim, indices


@kernel("take_along_dim")
def take_along_dim(self, indices, dim=None):
    """Values at ``indices`` along ``dim`` (CompositeImplicitAutograd: a gather)."""
    self, dim, indices = _take_along_dim_operands(self, indices, dim)
    return aten.gather.default(self, dim, indices)


@kernel("take_along_dim_out")
def take_along_dim_out(self, indices, dim=None, *, out):
    self, dim, indices = _take_along_dim_operands(self, indices, dim)
    return aten.gather.out(self, dim, indices, out=out)


# -- combinations, vander, cov, corrcoef, trapezoid rules (CompositeImplicitAutograd) ------

@kernel("combinations")
def combinations(self, r=2, with_replacement=False):
    """itertools.combinations of a vector's elements: an r-fold meshgrid, kept
    where its index grid increases (weakly with replacement), stacked."""
    if len(self._shape) != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_sizes(self._shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return aten.empty.memory_format([0], dtype=self.dtype, device=self.device)
    grids = aten.meshgrid.indexing([self] * r, indexing="ij")
    index = aten.arange.default(self._shape[0], dtype=dt.int64, device=self.device)
    index_grids = aten.meshgrid.indexing([index] * r, indexing="ij")
    mask = aten.full.default([self._shape[0]] * r, True, dtype=dt.bool_, device=self.device)
    order = aten.le.Tensor if with_replacement else aten.lt.Tensor
    for lower, upper in zip(index_grids, index_grids[1:]):
        mask = aten.mul.Tensor(mask, order(lower, upper))
    return aten.stack.default([aten.masked_select.default(g, mask) for g in grids], 1)


@kernel("vander")
def vander(x, N=None, increasing=False):
    """Columns x^0, x^1, ... (a cumprod of x repeated), decreasing unless asked;
    integer inputs give int64, as cumprod promotes them."""
    if len(x._shape) != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    result = aten.empty.memory_format([x._shape[0], n], dtype=dt.promote_types(x.dtype, dt.int64),
                                      device=x.device)
    if n > 0:
        aten.fill_.Scalar(result, 1)
        if n > 1:
            powers = aten.slice.Tensor(result, 1, 1)
            aten.copy_.default(powers, aten.unsqueeze.default(x, 1))
            aten.copy_.default(powers, aten.cumprod.default(powers, 1))
    return result if increasing else aten.flip.default(result, [1])


def _observation_weights(name, w, kind, num_observations):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    if kind == "integral" and (w.dtype.category >= dt.FLOATING or w.dtype is dt.bool_):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{w.dtype._short} dtype")
    if kind == "floating" and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} "
                           f"with {w.dtype._short} dtype")
    if w.numel() != num_observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {num_observations}")
    if num_observations and not aten.ge.Scalar(aten.min.default(w), 0).item():
        raise RuntimeError(f"cov(): {name} cannot be negative")


@kernel("cov")
def cov(self, *, correction=1, fweights=None, aweights=None):
    """The covariance of the rows (variables) over the columns (observations),
    weighted by frequency and importance weights, divided by the weights' sum
    less the correction (clamped at 0 with a warning)."""
    if self.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {self.dim()} dimensions")
    if self.dtype is dt.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = aten.view.default(self, [1, -1]) if self.dim() < 2 else self
    n = x._shape[1]
    w = None
    if fweights is not None:
        _observation_weights("fweights", fweights, "integral", n)
        w = fweights
    if aweights is not None:
        _observation_weights("aweights", aweights, "floating", n)
        w = aweights if w is None else aten.mul.Tensor(w, aweights)
    if w is None:
        w_sum = aten.scalar_tensor.default(n, dtype=dt.int64, device=self.device)
    else:
        w_sum = aten.sum.default(w)
        if not aten.ne.Scalar(w_sum, 0).item():
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    weighted = x if w is None else aten.mul.Tensor(x, w)
    avg = aten.div.Tensor(aten.sum.dim_IntList(weighted, [1]), w_sum)
    if w is not None and aweights is not None and correction != 0:
        spread = aten.div.Tensor(aten.sum.default(aten.mul.Tensor(w, aweights)), w_sum)
        norm_factor = aten.sub.Tensor(w_sum, aten.mul.Scalar(spread, correction))
    else:
        norm_factor = aten.sub.Scalar(w_sum, correction)
    if aten.le.Scalar(norm_factor, 0).item():
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations." + _triggered_at("Correlation.cpp:129"),
                      UserWarning, stacklevel=2)
        norm_factor = aten.zeros_like.default(norm_factor)
    centered = aten.sub.Tensor(x, aten.unsqueeze.default(avg, 1))
    right = centered if w is None else aten.mul.Tensor(centered, w)
    c = aten.mm.default(centered, aten.conj.default(aten.t.default(right)))
    return aten.squeeze.default(aten.true_divide.Tensor(c, norm_factor))


@kernel("corrcoef")
def corrcoef(self):
    """cov scaled by the standard deviations of both variables, clipped to [-1, 1]
    (real and imaginary parts apart); a single variable gives c / c."""
    if self.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {self.dim()} dimensions")
    c = aten.cov.default(self)
    if c.dim() == 0:
        return aten.div.Tensor(c, c)
    d = aten.diagonal.default(c)
    stddev = aten.sqrt.default(aten.real.default(d) if d.dtype.is_complex else d)
    c = aten.div.Tensor(c, aten.view.default(stddev, [-1, 1]))
    c = aten.div.Tensor(c, aten.view.default(stddev, [1, -1]))
    if c.dtype.is_complex:
        return aten.complex.default(aten.clip.default(aten.real.default(c), -1, 1),
                                    aten.clip.default(aten.imag.default(c), -1, 1))
    return aten.clip.default(c, -1, 1)


def _sample_spacing(name, y, x, dim):
    """x's differences along ``dim``, x first viewed to line up with y: a vector
    along ``dim``, fewer dims padded in front (numpy broadcasts dx with dy)."""
    if y.dtype is dt.bool_ or x.dtype is dt.bool_:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    if x.dim() == 1:
        if x._shape[0] != y._shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x._shape[0]
        x = aten.view.default(x, shape)
    elif x.dim() < y.dim():
        x = aten.view.default(x, [1] * (y.dim() - x.dim()) + list(x._shape))
    return aten.sub.Tensor(aten.slice.Tensor(x, dim, 1), aten.slice.Tensor(x, dim, 0, -1))


def _real_dx(name, y, dx):
    if y.dtype is dt.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _empty_integral(y, dim):
    """No samples: numpy's 0, shaped as y without ``dim``."""
    shape = [n for i, n in enumerate(y._shape) if i != wrap_dim(dim, y.dim())]
    return aten.zeros.default(shape, dtype=y.dtype, device=y.device)


def _pair_sums(y, dim):
    return aten.add.Tensor(aten.slice.Tensor(y, dim, 1), aten.slice.Tensor(y, dim, 0, -1))


@kernel("trapezoid_x")
def trapezoid_x(y, x, *, dim=-1):
    """The trapezoid rule: sum of (y_i + y_(i+1)) * dx, halved."""
    dim = wrap_dim(dim, y.dim())
    if y._shape[dim] == 0:
        return _empty_integral(y, dim)
    dx = _sample_spacing("trapezoid", y, x, dim)
    return aten.div.Scalar(aten.sum.dim_IntList(aten.mul.Tensor(_pair_sums(y, dim), dx), [dim]),
                           2.0)


@kernel("trapezoid_dx")
def trapezoid_dx(y, *, dx=1, dim=-1):
    """Even spacing: (sum(y) - (y_first + y_last) / 2) * dx."""
    if y._shape[wrap_dim(dim, y.dim())] == 0:
        return _empty_integral(y, dim)
    dx = _real_dx("trapezoid", y, dx)
    ends = aten.add.Tensor(aten.select.int(y, dim, 0), aten.select.int(y, dim, -1))
    return aten.mul.Scalar(aten.sub.Tensor(aten.sum.dim_IntList(y, [dim]),
                                           aten.mul.Scalar(ends, 0.5)), dx)


@kernel("cumulative_trapezoid_x")
def cumulative_trapezoid_x(y, x, *, dim=-1):
    """The running trapezoid rule: cumsum of (y_i + y_(i+1)) * dx, halved."""
    dim = wrap_dim(dim, y.dim())
    dx = _sample_spacing("cumulative_trapezoid", y, x, dim)
    return aten.div.Scalar(aten.cumsum.default(aten.mul.Tensor(_pair_sums(y, dim), dx), dim), 2.0)


@kernel("cumulative_trapezoid_dx")
def cumulative_trapezoid_dx(y, *, dx=1, dim=-1):
    dx = _real_dx("cumulative_trapezoid", y, dx)
    return aten.cumsum.default(aten.mul.Scalar(_pair_sums(y, dim), dx / 2.0), dim)


# -- unsafe splits, narrow_copy, slice_inverse ---------------------------------------------

def _unaliased(parts):
    """ATen's unsafe_split: split's views, each with a fresh version counter (so
    an in-place write to one is not seen as a write to the others)."""
    for part in parts:
        part._version_counter, part._base = [0], None
    return parts


@kernel("unsafe_split")
def unsafe_split(self, split_size, dim=0):
    return _unaliased(aten.split.Tensor(self, split_size, dim))


@kernel("unsafe_split_with_sizes")
def unsafe_split_with_sizes(self, split_sizes, dim=0):
    return _unaliased(aten.split_with_sizes.default(self, split_sizes, dim))


@kernel("unsafe_chunk")
def unsafe_chunk(self, chunks, dim=0):
    """CompositeImplicitAutograd: chunk's sizes through unsafe_split(_with_sizes)."""
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = self._shape[wrap_dim(dim, self.dim())]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:      # every chunk empty: as many as asked for
        return aten.unsafe_split_with_sizes.default(self, [0] * chunks, dim)
    return aten.unsafe_split.Tensor(self, split_size, dim)


@kernel("narrow_copy")
def narrow_copy(self, dim, start, length):
    """A contiguous copy of ``self.narrow(dim, start, length)``, with
    narrow_copy_dense_cpu's own checks."""
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= self.dim():
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    dim = wrap_dim(dim, self.dim())
    size = self._shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    if start < 0:
        start += size
    if length < 0 or start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return aten.clone.default(aten.slice.Tensor(self, dim, start, start + length),
                              memory_format=contiguous_format)


@kernel("slice_inverse")
def slice_inverse(self, src, dim=0, start=None, end=None, step=1):
    """The base a slice came from, as a view of the slice's storage with
    ``src``'s geometry (what functionalization replays)."""
    return aten.as_strided.default(self, list(src._shape), list(src._stride), src._offset)


# the out= overloads PyTorch's codegen derives for the unsafe splits: each piece
# copied into its ``out`` (resized; the dtype must match), as split_copy's
kernel("unsafe_split_out")(_multi_view_copy_out_kernel("split.Tensor", "unsafe_split_Tensor_out",
                                                       True))
kernel("unsafe_split_with_sizes_out")(_multi_view_copy_out_kernel(
    "split_with_sizes.default", "unsafe_split_with_sizes_out", True))
