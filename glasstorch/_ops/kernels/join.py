"""Joining tensors: cat (structured), stack/hstack/vstack (composites over cat).

    cat([a (2, 3), b (4, 3)], dim=0)  ->  (6, 3): a's rows, then b's rows

The output dtype is the promotion of all inputs; its memory format is the one
all inputs suggest (channels_last when every input looks NHWC), else
contiguous.  PyTorch's legacy rule skips 1-d empty tensors (shape (0,)) when
checking shapes, so ``cat([x, torch.tensor([])])`` still works for any x.
"""
from __future__ import annotations

from ..._core import dtype as dt
from ..._core.layout import contiguous_format
from ..._dispatcher.dispatcher import ops
from ..._tensor import channels_last_strides
from ..structured import TensorMeta, check_same_device, wrap_dim
from . import impl, kernel, meta
from ._common import _sizes
from ._inner import inner
from .factory import GRAIN_SIZE
from .native import get_num_threads
from .view import assign, suggest_memory_format


def _skipped(t) -> bool:
    return len(t._shape) == 1 and t._shape[0] == 0


def _cat_dtype(tensors):
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dtype:
            dtype = dt.promote_types(dtype, t.dtype)
    return dtype


@meta("cat")
def cat_meta(tensors, dim=0):
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not t._shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    check_same_device(*tensors)
    dtype = _cat_dtype(tensors)
    kept = [(i, t) for i, t in enumerate(tensors) if not _skipped(t)]
    if not kept:
        return TensorMeta((0,), dtype)
    ref = kept[0][1]
    ndim = len(ref._shape)
    dim = wrap_dim(dim, ndim)
    total = 0
    for i, t in kept:
        if len(t._shape) != ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ndim} and "
                               f"{len(t._shape)}")
        for d in range(ndim):
            if d != dim and t._shape[d] != ref._shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{ref._shape[d]} but got size {t._shape[d]} for tensor number {i} in the "
                    "list.")
        total += t._shape[dim]
    shape = ref._shape[:dim] + (total,) + ref._shape[dim + 1:]
    fmt = _cat_memory_format(tensors)
    return TensorMeta(shape, dtype,
                      None if fmt is contiguous_format else channels_last_strides(shape))


def _cat_memory_format(tensors):
    """channels_last(_3d) when every input suggests it, else contiguous."""
    fmt = None
    for t in tensors:
        f = suggest_memory_format(t)
        if f is contiguous_format or (fmt is not None and f is not fmt):
            return contiguous_format
        fmt = f
    return fmt


@impl("cat")
def cat_impl(out, tensors, dim=0):
    """Each input into its slice of ``out``.  As ATen's cat_out_cpu: a small
    (or single-thread) cat of contiguous same-dtype inputs copies directly
    (along dim 0, or of a floating dtype); otherwise it copies through
    ``narrow`` views of the result: one view reused when every input has the
    same sizes and strides, else one view per input."""
    kept = [t for t in tensors if not _skipped(t)]
    if not kept or not out.numel():
        return
    dim = wrap_dim(dim, len(kept[0]._shape))
    fmt = _cat_memory_format(tensors)
    same_dtype = all(t.dtype is out.dtype for t in tensors)
    direct = (out.numel() < GRAIN_SIZE or get_num_threads() == 1) and same_dtype and \
        all(t._is_contiguous() if fmt is contiguous_format else
            t.is_contiguous(memory_format=fmt) for t in kept) and \
        (dim == 0 and fmt is contiguous_format or out.dtype.is_floating_point)
    if not direct and all(t._shape == kept[0]._shape and t._stride == kept[0]._stride
                          for t in kept) and out.is_contiguous(memory_format=fmt) and same_dtype:
        inner.narrow(out, dim, 0, kept[0]._shape[dim])     # the one view ATen reuses
        direct = True
    dst = out._np()
    lead = (slice(None),) * dim
    start = 0
    for t in kept:
        n = t._shape[dim]
        into = dst[lead + (slice(start, start + n),)] if direct else \
            inner.narrow(out, dim, start, n)._np()
        assign(into, t._np(), out.dtype, t.dtype)
        start += n


@kernel("stack")
def stack(tensors, dim=0):
    """cat along ``dim`` then split that dim with a view (or cat of unsqueezed
    inputs when ``dim`` is the new last dim), as PyTorch's composite does."""
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]._shape
    dim = wrap_dim(dim, len(ref) + 1)
    for i, t in enumerate(tensors):
        if t._shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{_sizes(ref)} at entry 0 and {_sizes(t._shape)} at "
                               f"entry {i}")
    sizes = list(ref[:dim]) + [len(tensors)] + list(ref[dim:])
    if dim < len(ref):
        out = ops.aten.view.default(ops.aten.cat.default(list(tensors), dim), sizes)
        out._base = None  # an implementation detail, not a view the caller sees
        return out
    return ops.aten.cat.default([ops.aten.unsqueeze.default(t, dim) for t in tensors], dim)


def _atleast(tensors, ndim):
    out = []
    for t in tensors:
        if len(t._shape) >= ndim:
            out.append(t)
        elif ndim == 1 or not t._shape:
            out.append(ops.aten.reshape.default(t, [1] * ndim))
        else:  # 1-d -> (1, n)
            out.append(ops.aten.unsqueeze.default(t, 0))
    return out


@kernel("hstack")
def hstack(tensors):
    tensors = _atleast(tensors, 1)
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return ops.aten.cat.default(tensors, 0 if len(tensors[0]._shape) == 1 else 1)


@kernel("vstack")
def vstack(tensors):
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return ops.aten.cat.default(_atleast(tensors, 2), 0)


@kernel("row_stack")
def row_stack(tensors):
    """CompositeImplicitAutograd alias of vstack."""
    return ops.aten.vstack.default(tensors)


def _chunk_cat_inputs(tensors, dim, num_chunks):
    """ATen's checks of ``_chunk_cat``'s inputs; the wrapped dim (negative only
    when every input has the same rank)."""
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    for t in tensors:
        if not t.numel():
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
    check_same_device(*tensors)
    if all(len(t._shape) == len(tensors[0]._shape) for t in tensors):
        dim = wrap_dim(dim, len(tensors[0]._shape))
    else:
        if dim < 0:
            raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have "
                               "different ndims")
        if any(dim >= len(t._shape) for t in tensors):
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    if any(t._shape[:dim] != tensors[0]._shape[:dim] for t in tensors):
        raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all "
                           "tensors")
    return dim


def _chunk_pieces(tensors, dim, num_chunks):
    """Each input zero-padded along ``dim`` to a multiple of ``num_chunks`` and
    viewed as (leading dims, num_chunks, the rest of its chunk flattened)."""
    pieces = []
    for t in tensors:
        size = t._shape[dim]
        padded = -(-size // num_chunks) * num_chunks
        if padded != size:
            pad = [0, 0] * (len(t._shape) - dim - 1) + [0, padded - size]
            t = ops.aten.constant_pad_nd.default(t, pad, 0)
        pieces.append(ops.aten.reshape.default(t, list(t._shape[:dim]) + [num_chunks, -1]))
    return pieces


@kernel("_chunk_cat")
def _chunk_cat(tensors, dim, num_chunks):
    """``torch._chunk_cat`` (FSDP's all-gather input packing): each tensor split
    into ``num_chunks`` equal chunks along ``dim`` (the last one zero-padded),
    then chunk i of every tensor laid side by side in row i of the result."""
    dim = _chunk_cat_inputs(tensors, dim, num_chunks)
    return ops.aten.cat.default(_chunk_pieces(tensors, dim, num_chunks), dim + 1)


@kernel("_chunk_cat.out")
def _chunk_cat_out(tensors, dim, num_chunks, *, out):
    """_chunk_cat into ``out`` through cat.out (so ``out`` may be of any dtype the
    result casts to, as ATen's)."""
    dim = _chunk_cat_inputs(tensors, dim, num_chunks)
    return ops.aten.cat.out(_chunk_pieces(tensors, dim, num_chunks), dim + 1, out=out)
