"""Views and shape ops: new (sizes, strides, storage_offset) over the same storage.

A view never touches bytes.  Every kernel here computes the metadata PyTorch
computes and calls ``make_view``:

    out = Tensor over self's storage with (shape, stride, offset)
    out._base = the root base (views of views point at the original tensor)
    out._version_counter = self's (a write through any alias bumps all of them)

The element (i0..in) of a view lives at storage element
``offset + sum(ik * stride_k)``, so e.g. for a contiguous (2, 3, 4) tensor
(strides (12, 4, 1)):

    transpose(0, 2)   sizes (4, 3, 2)   strides (1, 4, 12)   offset 0
    narrow(1, 1, 2)   sizes (2, 2, 4)   strides (12, 4, 1)   offset 4
    unsqueeze(0)      sizes (1, 2, 3, 4) strides (24, 12, 4, 1)

Views are registered on CompositeExplicitAutograd (they serve CPU and Meta
alike: only metadata changes).  Composite ops (reshape, flatten, movedim,
contiguous ...) are CompositeImplicitAutograd decompositions that call other
ops through the dispatcher, as PyTorch's do.

This module also holds the copying shape ops that belong with them: clone,
copy_, resize_, flip, roll, repeat, tril/triu.

Also here: the backward ops of views (select/slice/diagonal/unfold_backward:
zeros of the input's shape with the gradient written, or for unfold added,
through the forward's view) and the complex views (real, view_as_real,
view_as_complex).
"""
from __future__ import annotations

import math
import sys

import numpy as np

from ..._core import dtype as dt
from ..._core.dispatch_key import DispatchKey
from ..._core.layout import (as_memory_format, channels_last, channels_last_3d,
                             contiguous_format, preserve_format, sparse_coo, strided)
from ..._dispatcher.dispatcher import ops
from ..._tensor import (Size, Tensor, _non_overlapping_and_dense,
                        channels_last_strides, contiguous_strides)
from ..._tensor import is_tensor_subclass_like, version_counter
from ..structured import (TensorMeta, broadcast_shapes, check_overlap, convert_array,
                          in_loop_order, iterator_strides, unproven_overlap, wrap_dim)
from . import KERNELS, impl, kernel, meta, native
from ._common import _sizes
from ._inner import inner, inner_op

INT64_MAX = sys.maxsize  # what PyTorch passes for an open slice end


# -- the one way to make a view -----------------------------------------------------

def _sparse_view_error(self: Tensor, op: str = "as_strided") -> Exception:
    """What PyTorch raises for a strided view of a sparse tensor: ``op`` (the
    view itself: ``view``, ``unfold``; or ``as_strided``, which the other
    views reach) has kernels for dense backends only.  (Compressed tensors
    mostly fail before that, reading their strides: ``NoStrides``; the views
    a sparse tensor does have, transpose, select and for COO permute and
    unsqueeze, are its own kernels.)"""
    compressed = self.layout is not sparse_coo
    key = ("SparseCsr" if compressed else "Sparse") + ("CUDA" if self.device.type == "cuda"
                                                        else "CPU")
    return getattr(ops.aten, op).default._entry.missing_kernel_error(getattr(DispatchKey, key))


def make_view(self: Tensor, shape, stride, offset) -> Tensor:
    """A tensor over ``self``'s storage; ``_base`` is the root base."""
    if self.layout is not strided:
        raise _sparse_view_error(self)
    out = Tensor._make(self._storage, shape, stride, offset, self.dtype, self.device, self._keys)
    base = self._base
    out._base = self if base is None else base
    out._version_counter = version_counter(self)
    return out


# -- view / reshape -------------------------------------------------------------------

def infer_size(shape, numel):
    """Replace a single -1 in ``shape`` so that the product is ``numel``."""
    newsize, infer_dim = 1, None
    for i, s in enumerate(shape):
        if s == -1:
            if infer_dim is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer_dim = i
        elif s >= 0:
            newsize *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{_sizes(shape)}")
    # with a -1, only divisibility is checked (a symbolic numel is never compared
    # with the product of the other sizes, as PyTorch's infer_size does)
    if infer_dim is None:
        if numel == newsize:
            return tuple(shape)
    elif newsize != 0 and numel % newsize == 0:
        shape = list(shape)
        shape[infer_dim] = numel // newsize
        return tuple(shape)
    elif newsize == 0 and numel == 0:
        raise RuntimeError(
            f"cannot reshape tensor of 0 elements into shape {_sizes(shape)} because "
            "the unspecified dimension size -1 can be any value and is ambiguous")
    raise RuntimeError(f"shape '{_sizes(shape)}' is invalid for input of size {numel}")


def compute_stride(oldshape, oldstride, newshape):
    """ATen's computeStride: strides that let ``newshape`` view memory laid out as
    (oldshape, oldstride), or None when a new dim would span two "contiguous
    subspaces" (runs of dims where stride[i] == stride[i+1] * size[i+1])."""
    if not oldshape:
        return (1,) * len(newshape)
    numel = math.prod(oldshape)
    if numel == 0:
        if tuple(oldshape) == tuple(newshape):
            return tuple(oldstride)
        return contiguous_strides(newshape)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        # end of a contiguous chunk: lay the view's dims over it
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


_NOT_VIEWABLE = ("view size is not compatible with input tensor's size and stride (at least one "
                 "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


@kernel("view")
@inner_op("aten::view")
def view(self, size):
    if self.layout is not strided:
        raise _sparse_view_error(self, "view")
    shape = infer_size(size, self.numel())
    stride = compute_stride(self._shape, self._stride, shape)
    if stride is None:
        raise RuntimeError(_NOT_VIEWABLE)
    return make_view(self, shape, stride, self._offset)


@kernel("view_dtype")
def view_dtype(self, dtype):
    """Reinterpret the bytes as another dtype; the last dim scales by the size ratio."""
    old, new = self.dtype, dtype
    if old.itemsize == new.itemsize:
        out = make_view(self, self._shape, self._stride, self._offset)
        out.dtype = new
        return out
    what = f"to view {old._short} as {new._short} (different element sizes)"
    if not self._shape:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if self._stride[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self._stride[-1]}")
    shape, stride, offset = list(self._shape), list(self._stride), self._offset
    if new.itemsize > old.itemsize:
        ratio = new.itemsize // old.itemsize
        if shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                               f"{shape[-1]}")
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                               f"but got {offset}")
        for i in range(len(shape) - 1):
            if stride[i] % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what}, "
                                   f"but got {stride[i]}")
            stride[i] //= ratio
        shape[-1] //= ratio
        offset //= ratio
    else:
        ratio = old.itemsize // new.itemsize
        for i in range(len(shape) - 1):
            stride[i] *= ratio
        shape[-1] *= ratio
        offset *= ratio
    out = make_view(self, shape, tuple(stride), offset)
    out.dtype = new
    return out


@kernel("_unsafe_view")
def _unsafe_view(self, size):
    """A view that autograd does not track as one (reshape's copy path uses it)."""
    shape = infer_size(size, self.numel())
    stride = compute_stride(self._shape, self._stride, shape)
    if stride is None:
        raise RuntimeError(_NOT_VIEWABLE)
    out = Tensor._make(self._storage, shape, stride, self._offset, self.dtype, self.device,
                       self._keys)
    out._version_counter = version_counter(self)
    return out


@kernel("_reshape_alias")
def _reshape_alias(self, size, stride):
    return make_view(self, tuple(size), tuple(stride), self._offset)


@kernel("reshape")
@inner_op("aten::reshape")
def reshape(self, shape):
    """A view when the strides allow it (``view`` for a contiguous tensor, else
    ``_reshape_alias``, as PyTorch records them; ``view`` of the size as given,
    ``-1`` and all, for a subclass-like tensor (``is_tensor_subclass_like``), as
    ATen's ``isTensorSubclassLike`` makes it), else a contiguous copy
    (clone + _unsafe_view)."""
    if self.layout is sparse_coo:
        raise RuntimeError("reshape is not implemented for sparse tensors")
    if self.layout is not strided:
        self.is_contiguous()    # raises: a compressed tensor has no strides to judge
    proposed, shape = shape, infer_size(shape, self.numel())
    stride = compute_stride(self._shape, self._stride, shape)
    if stride is not None:
        if is_tensor_subclass_like(self):                   # the size as given: [-1] stays
            return ops.aten.view.default(self, list(proposed))
        if self._is_contiguous():
            return ops.aten.view.default(self, list(shape))
        return ops.aten._reshape_alias.default(self, list(shape), list(stride))
    copy = ops.aten.clone.default(self, memory_format=contiguous_format)
    return ops.aten._unsafe_view.default(copy, list(shape))


@kernel("reshape_as")
def reshape_as(self, other):
    return ops.aten.reshape.default(self, list(other._shape))


@kernel("view_as")
def view_as(self, other):
    return ops.aten.view.default(self, list(other._shape))


@kernel("flatten")
def flatten(self, start_dim=0, end_dim=-1):
    ndim = len(self._shape)
    start, end = wrap_dim(start_dim, ndim), wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if ndim == 0:
        return ops.aten.reshape.default(self, [1])
    if start == end:
        return self
    shape = list(self._shape[:start]) + [math.prod(self._shape[start:end + 1])] + \
        list(self._shape[end + 1:])
    return reshape(self, shape)    # ATen calls native::reshape, not the op


@kernel("unflatten")
def unflatten(self, dim, sizes):
    dim = wrap_dim(dim, len(self._shape))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = self._shape[dim]
    try:
        inferred = infer_size(sizes, n)
    except RuntimeError:
        if list(sizes).count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred") from None
        raise RuntimeError(f"unflatten: Provided sizes {_sizes(sizes)} don't multiply up to "
                           f"the size of dim {dim} ({n}) in the input tensor") from None
    shape = list(self._shape[:dim]) + list(inferred) + list(self._shape[dim + 1:])
    return ops.aten.view.default(self, shape)


# -- dims: transpose, permute, squeeze, unsqueeze, movedim -----------------------------

@kernel("transpose")
@inner_op("aten::transpose.int")
def transpose(self, dim0, dim1):
    ndim = len(self._shape)
    d0, d1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    shape, stride = list(self._shape), list(self._stride)
    if ndim:
        shape[d0], shape[d1] = shape[d1], shape[d0]
        stride[d0], stride[d1] = stride[d1], stride[d0]
    return inner.as_strided(self, shape, stride, self._offset)


def check_t(self, name="t") -> None:
    ndim = len(self._shape)
    if ndim > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {ndim}D")


@kernel("t")
def t(self):
    check_t(self)
    ndim = len(self._shape)
    return inner.transpose(self, 0, 0 if ndim < 2 else 1)


@kernel("swapaxes")
def swapaxes(self, axis0, axis1):
    return ops.aten.transpose.int(self, axis0, axis1)


@kernel("swapdims")
def swapdims(self, dim0, dim1):
    return ops.aten.transpose.int(self, dim0, dim1)


@kernel("adjoint")
def adjoint(self):
    """The conjugate transpose of the last two dims (CompositeImplicitAutograd)."""
    ndim = len(self._shape)
    if ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {ndim}-D tensor.")
    result = ops.aten.transpose.int(self, -2, -1)
    return ops.aten.conj.default(result) if self.dtype.category == dt.COMPLEX else result


@kernel("swapaxes_")
def swapaxes_(self, axis0, axis1):
    return ops.aten.transpose_.default(self, axis0, axis1)


@kernel("swapdims_")
def swapdims_(self, dim0, dim1):
    return ops.aten.transpose_.default(self, dim0, dim1)


def permutation(dims, ndim):
    """permute's ``dims`` checked against ``ndim`` dims and wrapped (ATen's
    messages, "sparse_coo" even for a dense tensor, as ATen words it)."""
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = [wrap_dim(d, ndim) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return wrapped


@kernel("permute")
def permute(self, dims):
    if self.layout is not strided:      # a compressed tensor (COO has its own permute)
        raise _sparse_view_error(self)
    wrapped = permutation(dims, len(self._shape))
    shape, stride = self._shape, self._stride
    return inner.as_strided(self, [shape[d] for d in wrapped], [stride[d] for d in wrapped],
                     self._offset)


def _movedim_perm(ndim, source, destination):
    src = [wrap_dim(d, ndim) for d in source]
    dst = [wrap_dim(d, ndim) for d in destination]
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({_sizes(source)} dims) "
            f"should contain the same number of dims as destination ({_sizes(destination)}"
            " dims)")
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({_sizes(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({_sizes(destination)})")
    order = [-1] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    return [o if o != -1 else next(rest) for o in order]


@kernel("movedim_int")
def movedim_int(self, source, destination):
    return ops.aten.permute.default(self, _movedim_perm(len(self._shape), [source],
                                                        [destination]))


@kernel("movedim")
def movedim(self, source, destination):
    return ops.aten.permute.default(self, _movedim_perm(len(self._shape), source, destination))


@kernel("moveaxis_int")
def moveaxis_int(self, source, destination):
    return ops.aten.movedim.int(self, source, destination)


@kernel("moveaxis")
def moveaxis(self, source, destination):
    return ops.aten.movedim.intlist(self, source, destination)


@kernel("unsqueeze")
@inner_op("aten::unsqueeze")
def unsqueeze(self, dim):
    ndim = len(self._shape)
    dim = wrap_dim(dim, ndim + 1)
    shape, stride = list(self._shape), list(self._stride)
    new_stride = 1 if dim >= ndim else shape[dim] * stride[dim]
    shape.insert(dim, 1)
    stride.insert(dim, new_stride)
    return inner.as_strided(self, shape, stride, self._offset)


def _squeeze_dims(self, dims):
    keep = [i for i, n in enumerate(self._shape) if not (n == 1 and i in dims)]
    return inner.as_strided(self, [self._shape[i] for i in keep],
                            [self._stride[i] for i in keep], self._offset)


@kernel("squeeze")
def squeeze(self):
    return _squeeze_dims(self, range(len(self._shape)))


@kernel("squeeze_dim")
@inner_op("aten::squeeze.dim")
def squeeze_dim(self, dim):
    return _squeeze_dims(self, (wrap_dim(dim, len(self._shape)),))


@kernel("squeeze_dims")
def squeeze_dims(self, dim):
    ndim = len(self._shape)
    return _squeeze_dims(self, {wrap_dim(d, ndim) for d in dim})


# -- slicing: select, slice, narrow, split, unbind, diagonal, unfold, as_strided ----------

@kernel("select")
@inner_op("aten::select.int")
def select(self, dim, index):
    ndim = len(self._shape)
    if ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, ndim)
    size = self._shape[dim]
    if index < -size or index >= size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_sizes(self._shape)} at dimension {dim}")
    if index < 0:
        index += size
    stride = self._stride
    return inner.as_strided(self, self._shape[:dim] + self._shape[dim + 1:],
                            stride[:dim] + stride[dim + 1:], self._offset + index * stride[dim])


def _slice_bound(index, size):
    """A slice bound clamped into [0, size], a negative one counted from the end.
    The comparisons are PyTorch's (fake_impls' _compute_slice_index), in its
    order, so a symbolic bound records the guards PyTorch's does."""
    if index >= 0 and index <= size:
        return index
    if index < 0 and index >= -size:
        return index + size
    return 0 if index < -size else size


@kernel("slice")
def slice_(self, dim=0, start=None, end=None, step=1):
    shape = self._shape
    ndim = len(shape)
    if ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if dim < 0 or dim >= ndim:
        dim = wrap_dim(dim, ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = shape[dim]
    start = 0 if start is None else _slice_bound(start, size)
    end = size if end is None else _slice_bound(end, size)
    length = (end - start + step - 1) // step if end >= start else 0
    stride = self._stride
    return inner.as_strided(self, shape[:dim] + (length,) + shape[dim + 1:],
                            stride[:dim] + (stride[dim] * step,) + stride[dim + 1:],
                            self._offset + start * stride[dim])


@kernel("narrow")
def narrow(self, dim, start, length):
    ndim = len(self._shape)
    if ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, ndim)
    size = self._shape[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return ops.aten.slice.Tensor(self, dim, start, start + length, 1)


@inner_op("aten::narrow")
def _narrow_view(self, dim, start, length):
    """narrow's view for a checked, non-negative ``start``."""
    shape, stride = self._shape, self._stride
    return make_view(self, shape[:dim] + (length,) + shape[dim + 1:], stride,
                     self._offset + start * stride[dim])


@kernel("split")
def split(self, split_size, dim=0):
    if not self._shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = wrap_dim(dim, len(self._shape))
    dim_size = self._shape[dim]
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    if split_size == 0 and dim_size != 0:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {dim_size}")
    num_splits = max((dim_size + split_size - 1) // split_size, 1) if split_size else 1
    last = split_size - (split_size * num_splits - dim_size)
    return [inner.narrow(self, dim, i * split_size, split_size if i < num_splits - 1 else last)
            for i in range(num_splits)]


@kernel("split_with_sizes")
def split_with_sizes(self, split_sizes, dim=0):
    if not self._shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = wrap_dim(dim, len(self._shape))
    dim_size = self._shape[dim]
    if any(s < 0 for s in split_sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={_sizes(split_sizes)}")
    if sum(split_sizes) != dim_size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {dim_size} "
                           f"(input tensor's size at dimension {dim}), but got "
                           f"split_sizes={_sizes(split_sizes)}")
    out, start = [], 0
    for s in split_sizes:
        out.append(inner.narrow(self, dim, start, s))
        start += s
    return out


@kernel("chunk")
def chunk(self, chunks, dim=0):
    if not self._shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = wrap_dim(dim, len(self._shape))
    dim_size = self._shape[dim]
    split_size = (dim_size + chunks - 1) // chunks
    if split_size == 0 and dim_size == 0:
        return ops.aten.split_with_sizes.default(self, [0] * chunks, dim)
    return ops.aten.split.Tensor(self, split_size, dim)


def _split_points(self, dim, indices):
    dim_size = self._shape[dim]
    out, prev = [], 0
    for idx in list(indices) + [dim_size]:
        start = min(max(prev, 0), dim_size)
        stop = min(max(idx, start), dim_size)
        out.append(ops.aten.slice.Tensor(self, dim, start, stop))
        prev = idx
    return out


def _check_splittable(self):
    if not self._shape:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")


@kernel("tensor_split_sections")
def tensor_split_sections(self, sections, dim=0):
    _check_splittable(self)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    dim = wrap_dim(dim, len(self._shape))
    size = self._shape[dim]
    small, extra = divmod(size, sections)
    points, acc = [], 0
    for i in range(sections - 1):
        acc += small + (1 if i < extra else 0)
        points.append(acc)
    return _split_points(self, dim, points)


@kernel("tensor_split_indices")
def tensor_split_indices(self, indices, dim=0):
    _check_splittable(self)
    dim = wrap_dim(dim, len(self._shape))
    points = [i + self._shape[dim] if i < 0 else i for i in indices]
    return _split_points(self, dim, points)


@kernel("tensor_split_tensor_indices_or_sections")
def tensor_split_tensor_indices_or_sections(self, tensor_indices_or_sections, dim=0):
    """A 0-dim int64 CPU tensor is a number of sections, a 1-dim one the indices."""
    split = tensor_indices_or_sections
    _check_splittable(self)
    if split.device.type != "cpu":
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be on cpu, but "
                           f"it's on {split.device}")
    if split.dtype is not dt.int64:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of "
                           f"long, but got {split.dtype._short}")
    if split.dim() > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                           "zero-dimensional or one-dimensional tensor, but got a tensor with "
                           f"{split.dim()} dims")
    if split.dim() == 0:
        return ops.aten.tensor_split.sections(self, ops.aten.item.default(split), dim)
    return ops.aten.tensor_split.indices(self, split._np().tolist(), dim)


@kernel("unbind")
def unbind(self, dim=0):
    ndim = len(self._shape)
    if ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = wrap_dim(dim, ndim)
    select = inner.select if self.layout is strided else ops.aten.select.int  # COO: its own
    return [select(self, dim, i) for i in range(self._shape[dim])]


@kernel("diagonal")
def diagonal(self, offset=0, dim1=0, dim2=1):
    ndim = len(self._shape)
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, stride = list(self._shape), list(self._stride)
    if offset >= 0:
        diag_size = max(min(shape[d1], shape[d2] - offset), 0)
    else:
        diag_size = max(min(shape[d1] + offset, shape[d2]), 0)
    storage_offset = self._offset
    if diag_size > 0:
        storage_offset += offset * stride[d2] if offset >= 0 else -offset * stride[d1]
    diag_stride = stride[d1] + stride[d2]
    for d in sorted((d1, d2), reverse=True):
        del shape[d]
        del stride[d]
    return inner.as_strided(self, shape + [diag_size], stride + [diag_stride], storage_offset)


@kernel("unfold")
def unfold(self, dimension, size, step):
    if self.layout is not strided:
        raise _sparse_view_error(self, "unfold")
    ndim = len(self._shape)
    d = wrap_dim(dimension, ndim)
    max_size = self._shape[d] if ndim else 1
    if size > max_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {max_size} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, stride = list(self._shape), list(self._stride)
    if ndim:
        old_stride = stride[d]
        shape[d] = (max_size - size) // step + 1
        stride[d] = old_stride * step
    else:
        old_stride = 1
    return inner.as_strided(self, shape + [size], stride + [old_stride], self._offset)


@inner_op("aten::as_strided")
def _as_strided_unchecked(self, size, stride, storage_offset):
    """as_strided's result for the geometry a view kernel computed (valid by
    construction, so nothing to check)."""
    return make_view(self, tuple(size), tuple(stride), storage_offset)


@kernel("as_strided")
def as_strided(self, size, stride, storage_offset=None):
    if self.layout is not strided:
        raise _sparse_view_error(self)
    offset = self._offset if storage_offset is None else storage_offset
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {_sizes(stride)}")
    _check_in_bounds(self, size, stride, offset)
    return make_view(self, tuple(size), tuple(stride), offset)


def _check_in_bounds(self, size, stride, offset):
    if 0 in size:
        return
    itemsize = self.dtype.itemsize
    needed = (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * itemsize
    nbytes = self._storage._nbytes
    if needed > nbytes:
        raise RuntimeError(
            f"setStorage: sizes {_sizes(size)}, strides {_sizes(stride)}, storage offset "
            f"{offset}, and itemsize {itemsize} requiring a storage size of {needed} are out of "
            f"bounds for storage of size {nbytes}")


@kernel("alias")
def alias(self):
    if self.layout is sparse_coo:
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")
    if self.layout is not strided:      # compressed: ATen's alias reads the strides first
        raise RuntimeError(self._stride.message)
    return make_view(self, self._shape, self._stride, self._offset)


@kernel("lift_fresh")
def lift_fresh(self):
    """``torch.tensor(data)`` passes its fresh result through here: the tensor
    itself (a dispatch mode or subclass sees a constant enter the program)."""
    return self


@kernel("resolve_conj")
@inner_op("aten::resolve_conj")
def resolve_conj(self):
    """``self`` with no conjugate bit left to materialize: glasstorch conjugates
    eagerly (there is no conj bit), so ``self`` itself.  ATen's matmul kernels
    call it on their operands, and the profiler shows those calls."""
    return self


@kernel("detach")
def detach(self):
    """Same memory, no autograd history.  PyTorch doesn't report it as a view
    (``_base`` stays None), but it shares storage and version counter.  Its
    autograd kernel (VariableTypeManual.cpp) is a range named "detach" to the
    profiler: autograd/variable_type.py opens it, above this kernel, so a
    kernel's own detach (below the autograd keys) shows none."""
    return _detached(self)


@kernel("detach_")
def detach_(self):
    """Below autograd there is no history to drop: ``self`` as it is (a tensor
    without autograd keys, an inference tensor, lands here)."""
    return self


def _detached(self):
    out = Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype,
                       self.device, self._keys)
    out._version_counter = version_counter(self)
    return out


# -- expand ---------------------------------------------------------------------------

def expand_geometry(tensor_shape, tensor_stride, sizes, self=None):
    """ATen's inferExpandGeometry: size-1 dims (and new leading dims) get stride 0."""
    ndim, tensor_dim = len(sizes), len(tensor_shape)
    if ndim < tensor_dim:
        name = f"torch.{self.dtype._short}Tensor" if self is not None else "Tensor"
        raise RuntimeError(
            f"expand({name}{{{_sizes(tensor_shape)}}}, size={_sizes(sizes)}): the number "
            f"of sizes provided ({ndim}) must be greater or equal to the number of dimensions in "
            f"the tensor ({tensor_dim})")
    if tensor_dim == 0:
        for i, s in enumerate(sizes):
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
        return tuple(sizes), (0,) * ndim
    out_shape, out_stride = [0] * ndim, [0] * ndim
    for i in range(ndim - 1, -1, -1):
        dim = tensor_dim - 1 - (ndim - 1 - i)
        size = tensor_shape[dim] if dim >= 0 else 1
        stride = tensor_stride[dim] if dim >= 0 else out_shape[i + 1] * out_stride[i + 1]
        target = sizes[i]
        if target == -1:
            if dim < 0:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            target = size
        if size != target:
            if size != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: "
                    f"{_sizes(sizes)}.  Tensor sizes: {_sizes(tensor_shape)}")
            size, stride = target, 0
        out_shape[i], out_stride[i] = size, stride
    return tuple(out_shape), tuple(out_stride)


@kernel("expand")
@inner_op("aten::expand")
def expand(self, size, implicit=False):
    if self.layout is not strided:
        raise RuntimeError(f"expand is unsupported for {self.layout.aten_name} tensors")
    shape, stride = expand_geometry(self._shape, self._stride, size, self)
    return inner.as_strided(self, shape, stride, self._offset)


@kernel("expand_as")
def expand_as(self, other):
    return ops.aten.expand.default(self, list(other._shape))


@kernel("broadcast_tensors")
def broadcast_tensors(tensors):
    shape = list(broadcast_shapes(*(t._shape for t in tensors))) if tensors else []
    return [t if t._shape == tuple(shape) else ops.aten.expand.default(t, shape)
            for t in tensors]


# -- memory format ------------------------------------------------------------------

def is_channels_last_strides(shape, stride) -> bool:
    """c10's is_channels_last_strides_2d/3d: do (N, C, H, W[, D]) strides look NHWC?"""
    if len(shape) == 4:
        order = (1, 3, 2, 0)
    elif len(shape) == 5:
        order = (1, 4, 3, 2, 0)
    else:
        return False
    if stride[1] == 0:
        return False
    minimum = 0
    for d in order:
        if shape[d] == 0 or stride[d] < minimum:
            return False
        if d == 0 and minimum == stride[1]:
            return False
        minimum = stride[d]
        if shape[d] > 1:
            minimum *= shape[d]
    return True


def suggest_memory_format(t):
    """``Tensor.suggest_memory_format()``: channels_last when the strides look NHWC."""
    if len(t._shape) in (4, 5) and is_channels_last_strides(t._shape, t._stride):
        return channels_last if len(t._shape) == 4 else channels_last_3d
    return contiguous_format


def dense_strides(shape, stride):
    """ATen's infer_dense_strides: dense strides that keep the dims' order in memory."""
    return iterator_strides(shape, [stride]) if shape else ()


def strides_for_format(t, memory_format):
    """Output strides of ``empty_like(t, memory_format=...)`` (None = contiguous)."""
    memory_format = as_memory_format(memory_format)
    shape = t._shape
    if memory_format is None or memory_format is preserve_format:
        if _non_overlapping_and_dense(shape, t._stride):
            return t._stride
        return dense_strides(shape, t._stride)
    if memory_format is channels_last or memory_format is channels_last_3d:
        want = 4 if memory_format is channels_last else 5
        if len(shape) != want:
            raise RuntimeError(f"required rank {want} tensor to use "
                               f"{'channels_last' if want == 4 else 'channels_last_3d'} format")
        return channels_last_strides(shape)
    return None


@kernel("contiguous")
@inner_op("aten::contiguous")
def contiguous(self, memory_format=0):
    fmt = as_memory_format(memory_format)
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if self.is_contiguous(memory_format=fmt):
        return self
    return ops.aten.clone.default(self, memory_format=fmt)


# -- copies: clone, copy_, resize_ ----------------------------------------------------

@kernel("clone")
@inner_op("aten::clone")
def clone(self, memory_format=None):
    """ATen's clone: a new tensor, then ``copy_``.  Preserving the layout of
    a dense tensor is ``empty_strided`` with its strides; anything else is
    ``empty_like`` in the requested memory format."""
    fmt = as_memory_format(memory_format)
    if (fmt is None or fmt is preserve_format) and \
            (self._is_contiguous() or _non_overlapping_and_dense(self._shape, self._stride)):
        out = inner.empty_strided(self._shape, self._stride, dtype=self.dtype,
                                  device=self.device)
    else:
        out = inner.empty_like(self, memory_format=memory_format)
    return inner.copy_(out, self)


def assign(dst: np.ndarray, src, dst_dtype, src_dtype) -> None:
    """dst[...] = src (broadcasting) with the copy kernel's conversions: numpy's
    cast straight into ``dst`` (one pass, no converted temporary) unless the
    conversion is one of ``convert_array``'s own (to bool or a half type,
    complex to real); native.c's loop for contiguous real to complex."""
    src = np.asarray(src)
    if dst.dtype.kind == "c" and native.real_to_complex(src, dst):
        return
    if dst_dtype in (dt.bool_, dt.float16, dt.bfloat16) or \
            (src.dtype.kind == "c" and dst.dtype.kind != "c"):
        src = convert_array(src, src_dtype, dst_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        np.copyto(dst, src, casting="unsafe")


@inner_op("aten::copy_")
def _copy_unchecked(self, src):
    """copy_ into a fresh tensor of ``src``'s shape (no broadcast, no overlap to check)."""
    if self.device.type != "meta":
        assign(self._np(), src._cpu_array(), self.dtype, src.dtype)
    return self


@kernel("copy_")
def copy_(self, src, non_blocking=False):
    """Write ``src`` (broadcast to self's shape, converted to self's dtype) into self."""
    if isinstance(src, Tensor):
        shape = broadcast_shapes(self._shape, src._shape)
        if shape != tuple(self._shape):
            raise RuntimeError(f"output with shape {_sizes(self._shape)} doesn't match the "
                               f"broadcast shape {_sizes(shape)}")
        if self.device.type == "meta":
            return self
        if src.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if src is self:
            return self
        check_overlap(self, self, (src,), {})
        if unproven_overlap(self, (src,)):
            dst, source = self._np(), np.broadcast_to(src._np(), shape)
            for index in in_loop_order(self._shape, self._stride):
                at = index + (Ellipsis,)       # a 0-d view, not a copied scalar
                assign(dst[at], source[at], self.dtype, src.dtype)
            return self
        assign(self._np(), src._cpu_array(), self.dtype, src.dtype)
        return self
    if self.device.type != "meta":
        assign(self._np(), np.asarray(src), self.dtype,
               dt.complex128 if isinstance(src, complex) else None)
    return self


@kernel("copy")
def copy(self, src, non_blocking=False):
    out = ops.aten.clone.default(self)
    return ops.aten.copy_.default(out, src, non_blocking)


@kernel("resize_")
@inner_op("aten::resize_")
def resize_(self, size, memory_format=None):
    """Change sizes in place; the storage grows (keeping its bytes) when needed."""
    size = tuple(size)
    if any(s < 0 for s in size):     # c10 multiplies the sizes as unsigned: overflow
        raise RuntimeError("numel: integer multiplication overflow")
    fmt = as_memory_format(memory_format)
    if size == self._shape and fmt in (None, preserve_format):
        return self
    if fmt is channels_last or fmt is channels_last_3d:
        stride = channels_last_strides(size)
    else:
        stride = contiguous_strides(size)
    if 0 not in size:
        needed = (self._offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) \
            * self.dtype.itemsize
        if needed > self._storage._nbytes:
            self._storage._resize_(needed)
    self._shape = Size(size)
    self._stride = stride
    self._array = None
    return self


@kernel("resize_as_")
def resize_as_(self, the_template, memory_format=None):
    return ops.aten.resize_.default(self, list(the_template._shape), memory_format=memory_format)


# -- set_ (TensorShape.cpp): a tensor takes another storage and geometry, in place -------

@kernel("set_storage")
def set_storage(self, source, storage_offset, size, stride=()):
    """set_.source_Storage_storage_offset (checkSetStorage, then resize_impl_):
    the tensor now views ``source`` at ``storage_offset`` with ``size`` and
    ``stride`` (contiguous when empty); the storage grows if it must and can."""
    size, stride = tuple(size), tuple(stride)
    if stride and len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length "
                           f"({len(stride)})")
    if source is not self._storage and source.device != self._storage.device:
        raise RuntimeError(f'Attempted to set the storage of a tensor on device '
                           f'"{self._storage.device}" to a storage on different device '
                           f'"{source.device}".  This is no longer allowed; the devices must '
                           'match.')
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    stride = stride or contiguous_strides(size)
    if 0 not in size:
        needed = (storage_offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1) \
            * self.dtype.itemsize
        if needed > source._nbytes:
            source._resize_(needed)
    self._storage = source
    self._set_sizes_strides(Size(size), stride, storage_offset)
    return self


@kernel("set_")
def set_(self, source):
    """set_.source_Storage: all of ``source``, as a 1-d run of this dtype."""
    return set_storage(self, source, 0, [source.nbytes() // self.dtype.itemsize])


@kernel("set_tensor_")
def set_tensor_(self, source):
    """set_.source_Tensor: ``source``'s storage, offset, sizes and strides."""
    if source.dtype is not self.dtype:
        raise RuntimeError(f"Could not set tensor of type {dt.type_meta_name(source.dtype)} to "
                           f"a tensor of type {dt.type_meta_name(self.dtype)}")
    if source is self:
        return self
    return set_storage(self, source._storage, source._offset, source._shape, source._stride)


@kernel("set__symint")
def set__symint(self, source, storage_offset, size, stride=()):
    """set_.source_Tensor_storage_offset (CompositeImplicitAutograd): ``source``'s
    storage with the given geometry."""
    return ops.aten.set_.source_Storage_storage_offset(self, source.untyped_storage(),
                                                       storage_offset, size, stride)


@kernel("set_empty_")
def set_empty_(self):
    """set_(): a fresh storage of no bytes, size (0,)."""
    return set_storage(self, type(self._storage)._meta(0) if self.device.type == "meta"
                       else type(self._storage)(0), 0, [0])


# -- copying shape ops: flip, roll, repeat, tril, triu --------------------------------

def _unique_dims(dims, ndim):
    wrapped = [wrap_dim(d, ndim) for d in dims]
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return wrapped


@meta("flip")
def flip_meta(self, dims):
    _unique_dims(dims, len(self._shape))
    return TensorMeta(self._shape, self.dtype, strides_for_format(self, preserve_format))


@impl("flip")
def flip_impl(out, self, dims):
    axes = tuple(_unique_dims(dims, len(self._shape)))
    flip = axes and len(self._shape)      # a 0-d tensor has nothing to flip
    np.copyto(out._np(), np.flip(self._np(), axes) if flip else self._np())


@kernel("roll")
def roll(self, shifts, dims=()):
    """Composite, as PyTorch's: cat of two narrows per dim (flattened when no dims)."""
    if len(dims) == 0 and len(shifts) == 1:
        flat = ops.aten.flatten.using_ints(self)
        return ops.aten.view.default(ops.aten.roll.default(flat, shifts, [0]), list(self._shape))
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if self.numel() == 0:
        return ops.aten.clone.default(self, memory_format=preserve_format)
    result = self
    for shift, dim in zip(shifts, dims):
        dim = wrap_dim(dim, len(self._shape))
        size = self._shape[dim]
        start = (size - shift) % size
        a = ops.aten.narrow.default(result, dim, start, size - start)
        b = ops.aten.narrow.default(result, dim, 0, start)
        result = ops.aten.cat.default([a, b], dim)
    return result


@meta("repeat")
def repeat_meta(self, repeats):
    if len(repeats) < len(self._shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    pad = (1,) * (len(repeats) - len(self._shape)) + tuple(self._shape)
    shape = tuple(p * r for p, r in zip(pad, repeats))
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{_sizes(shape)}")
    return TensorMeta(shape, self.dtype)


@impl("repeat")
def repeat_impl(out, self, repeats):
    src = self._np().reshape((1,) * (len(repeats) - len(self._shape)) + tuple(self._shape))
    np.copyto(out._np(), np.tile(src, repeats))


def _tri_meta(name):
    def rule(self, diagonal=0):
        if len(self._shape) < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return TensorMeta(self._shape, self.dtype)
    return rule


meta("tril")(_tri_meta("tril"))
meta("triu")(_tri_meta("triu"))


@impl("tril")
def tril_impl(out, self, diagonal=0):
    rows, cols = self._shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool)
    src = self._np()
    np.copyto(out._np(), np.where(keep, src, np.zeros((), src.dtype)))


@impl("triu")
def triu_impl(out, self, diagonal=0):
    rows, cols = self._shape[-2:]
    drop = np.tri(rows, cols, diagonal - 1, dtype=bool)
    src = self._np()
    np.copyto(out._np(), np.where(drop, np.zeros((), src.dtype), src))


# -- in-place metadata ops ---------------------------------------------------------------

def _restride_in_place(name, view_name, check=None):
    """``x.unsqueeze_(0)``, ``x.t_()`` ...: the tensor takes the geometry its view
    would have (sizes, strides, offset); storage and bytes are untouched.
    ``check`` raises the in-place op's own error before the view's."""
    view_kernel = KERNELS[view_name]

    @kernel(name)
    def restride(self, *args):
        if check is not None:
            check(self, *args)
        view = view_kernel(self, *args)
        self._set_sizes_strides(view._shape, view._stride, view._offset)
        return self
    restride.__name__ = restride.__qualname__ = name


for _name, _view in (("unsqueeze_", "unsqueeze"), ("squeeze_", "squeeze"),
                     ("squeeze__dim", "squeeze_dim"), ("squeeze__dims", "squeeze_dims"),
                     ("transpose_", "transpose"), ("as_strided_", "as_strided")):
    _restride_in_place(_name, _view)
_restride_in_place("t_", "t", check=lambda self: check_t(self, "t_"))


# -- backward ops of views: zeros of the input's shape, the gradient written through the forward's view ---

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
                         f"{_sizes(input_sizes)} at dimension {dim}")
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


# -- complex views (real: a complex gradient's real part; view_as_real / view_as_complex) ---

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


@kernel("imag")
def imag(self):
    """The imaginary part of a complex tensor (a view); real tensors have none."""
    if self.dtype.category != dt.COMPLEX:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return ops.aten.select.int(ops.aten.view_as_real.default(self), -1, 1)
