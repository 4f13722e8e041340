"""Bags of embeddings (ATen's EmbeddingBag.cpp): what F.embedding_bag calls.

    bag b = indices[offsets[b] : offsets[b + 1]]   (the last bag runs to the end,
                                                     unless include_last_offset)
    mode 0 (sum)    out[b] = sum_i w_i * weight[indices[i]]   (w: per_sample_weights or 1)
    mode 1 (mean)   out[b] = sum_i weight[indices[i]] / max(bag size, 1)
    mode 2 (max)    out[b, d] = max_i weight[indices[i], d]   (0 for an empty bag)

Entries equal to ``padding_idx`` are skipped (and do not count in a bag's size).
``_embedding_bag`` returns ATen's three helper tensors with the result, which its
gradient reads: ``offset2bag`` (the bag of every index; empty where ATen's
float "sum" fast path skips it), ``bag_size`` and ``max_indices`` (the argmax row
per bag and feature in max mode, else a copy of ``bag_size``).
``embedding_bag`` (both overloads) is CompositeImplicitAutograd, as in PyTorch:
it wraps ``padding_idx`` and picks ``_embedding_bag`` when the weight needs a
gradient, ``_embedding_bag_forward_only`` otherwise.
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta
from . import impl, kernel, meta
from ._common import _array, _from_array, _write

aten = ops.aten

_SUM, _MEAN, _MAX = 0, 1, 2
_LEGACY = {dt.float32: "Float", dt.float64: "Double", dt.float16: "Half",
           dt.bfloat16: "BFloat16", dt.int64: "Long", dt.int32: "Int"}


def _scalar_types(name, arg, t, allowed):
    """checkScalarTypes' message."""
    if t.dtype not in allowed:
        names = ", ".join(_LEGACY[d] for d in allowed)
        found = _LEGACY.get(t.dtype, t.dtype._short)
        raise RuntimeError(f"Expected tensor for argument #1 '{arg}' to have one of the "
                           f"following scalar types: {names}; but got torch.{found}Tensor "
                           f"instead (while checking arguments for {name})")


def _index_type(indices, offsets):
    """promoteIndicesAndOffsets: both in their common integer type."""
    return dt.int64 if dt.int64 in (indices.dtype, offsets.dtype) else indices.dtype


def _fast_sum(weight, per_sample_weights, padding_idx) -> bool:
    """is_fast_path: ATen's "sum" kernel that skips offset2bag."""
    return (weight.dtype in (dt.float32, dt.float16, dt.bfloat16) and weight._stride[1] == 1
            and padding_idx < 0
            and (per_sample_weights is None or per_sample_weights._stride[0] == 1))


def _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset):
    if len(indices._shape) not in (1, 2):
        raise RuntimeError(f"input has to be a 1D or 2D Tensor, but got Tensor of dimension "
                           f"{len(indices._shape)}")
    if len(indices._shape) == 1 and len(offsets._shape) != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension "
                           f"{len(offsets._shape)}")
    _scalar_types("embedding_bag", "indices", indices, (dt.int64, dt.int32))
    _scalar_types("embedding_bag", "offsets", offsets, (dt.int64, dt.int32))
    _scalar_types("embedding_bag", "weight", weight,
                  (dt.float16, dt.bfloat16, dt.float32, dt.float64))
    if per_sample_weights is not None:
        if mode != _SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dtype is not weight.dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type "
                               f"as tensor for argument #1 'per_sample_weights'; but type "
                               f"torch.{_LEGACY[weight.dtype]}Tensor does not equal "
                               f"torch.{_LEGACY.get(per_sample_weights.dtype, '')}Tensor (while "
                               "checking arguments for embedding_bag)")
    if include_last_offset and offsets._shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")


def _meta(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
          per_sample_weights=None, include_last_offset=False, padding_idx=-1,
          requires_grad=True):
    _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    index_type = _index_type(indices, offsets)
    n_offsets = offsets._shape[0]
    bags = n_offsets - 1 if include_last_offset else n_offsets
    dim = weight._shape[1]
    keep_offset2bag = mode != _SUM or not _fast_sum(weight, per_sample_weights, padding_idx)
    offset2bag = (indices._shape[0],) if keep_offset2bag else (0,)
    bag_size = (bags,) if (requires_grad or mode != _SUM) else tuple(offsets._shape)
    max_indices = (bags, dim) if mode == _MAX else bag_size
    return (TensorMeta((bags, dim), weight.dtype), TensorMeta(offset2bag, index_type),
            TensorMeta(bag_size, index_type), TensorMeta(max_indices, index_type))


def _bags_of(offsets, n_indices, bags):
    """offset2bag: the bag of every index (make_offset2bag: a cumulative count of
    the offsets at or before each position)."""
    marks = np.zeros(n_indices + 1, dtype=np.int64)
    np.add.at(marks, offsets[:bags], 1)
    marks[0] -= 1
    return np.cumsum(marks)[:n_indices]


def _check_offsets(offsets, n_indices, legacy):
    if offsets.size:
        if offsets[0] != 0:     # (ATen prints offsets[0] as a 0-d tensor)
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got "
                               f"{offsets[0]}\n[ torch.{legacy}Tensor{{}} ]")
        if offsets[-1] > n_indices:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n_indices} "
                               f"but got offsets[-1] of {offsets[-1]}")


def _impl(outs, weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
          per_sample_weights=None, include_last_offset=False, padding_idx=-1, requires_grad=True):
    output, offset2bag, bag_size, max_indices = outs
    idx = indices._np().astype(np.int64).reshape(-1)
    off = offsets._np().astype(np.int64).reshape(-1)
    _check_offsets(off, idx.size, _LEGACY[offsets.dtype])
    bags, dim = output._shape
    vocab = weight._shape[0]
    bad = np.flatnonzero((idx < 0) | (idx >= vocab))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in "
                           f"the valid range [0, {vocab})")
    bag_of = _bags_of(off, idx.size, bags)     # (-1 everywhere when there is no bag)
    kept = (idx != padding_idx) & (bag_of >= 0)
    sizes = np.zeros(bags, dtype=np.int64)
    if bags:
        sizes = np.diff(np.append(off[:bags], idx.size))
        sizes = sizes - np.bincount(bag_of[idx == padding_idx], minlength=bags)[:bags]
    compute = weight.dtype.opmath
    w = _array(weight, compute)
    if mode == _MAX:
        result = np.zeros((bags, dim), dtype=compute)
        argmax = np.zeros((bags, dim), dtype=np.int64)
        seen = np.zeros(bags, dtype=bool)
        for i in np.flatnonzero(kept):      # first element, then strictly greater ones
            b, row = bag_of[i], w[idx[i]]
            better = ~seen[b] | (row > result[b])
            result[b] = np.where(better, row, result[b])
            argmax[b] = np.where(better, idx[i], argmax[b])
            seen[b] = True
        _write(max_indices, argmax)
        _write(bag_size, sizes)
    else:
        rows = w[idx[kept]]
        if per_sample_weights is not None:
            rows = rows * _array(per_sample_weights, compute).reshape(-1)[kept][:, None]
        result = np.zeros((bags, dim), dtype=compute)
        np.add.at(result, bag_of[kept], rows)
        if mode == _MEAN:
            result = result / np.maximum(sizes, 1).astype(compute)[:, None]
            _write(bag_size, sizes)
        else:
            _write(bag_size, 0)
        _write(max_indices, bag_size._np())
    _write(output, result)
    if offset2bag.numel():
        _write(offset2bag, bag_of)


@meta("_embedding_bag")
def _embedding_bag_meta(*args, **kwargs):
    return _meta(*args, **kwargs)


@impl("_embedding_bag")
def _embedding_bag_impl(outs, *args, **kwargs):
    _impl(outs, *args, **kwargs)


@meta("_embedding_bag_forward_only")
def _embedding_bag_forward_only_meta(*args, **kwargs):
    return _meta(*args, **kwargs, requires_grad=False)


@impl("_embedding_bag_forward_only")
def _embedding_bag_forward_only_impl(outs, *args, **kwargs):
    _impl(outs, *args, **kwargs, requires_grad=False)


@kernel("embedding_bag_padding_idx")
def embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                              per_sample_weights, include_last_offset, padding_idx):
    wrapped = -1
    if padding_idx is not None:
        n = weight._shape[0]
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} "
                               f"through {n - 1}, but got {padding_idx}")
        wrapped = padding_idx % n
    op = aten._embedding_bag if weight.requires_grad else aten._embedding_bag_forward_only
    return op.default(weight, aten.contiguous.default(indices),
                      aten.contiguous.default(offsets), scale_grad_by_freq, mode, sparse,
                      per_sample_weights, include_last_offset, wrapped)


@kernel("embedding_bag")
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False):
    return aten.embedding_bag.padding_idx(weight, indices, offsets, scale_grad_by_freq, mode,
                                          sparse, per_sample_weights, include_last_offset, None)


# -- gradients -----------------------------------------------------------------------------

def _offset2bag_for(indices, offsets, offset2bag, bags):
    """The backward ops rebuild offset2bag where the forward's fast path left it
    empty, over the forward's ``bags`` (with include_last_offset, indices past
    the last offset stay in the last bag, as the forward summed them; ATen's
    backward reads past its gradient there)."""
    if indices.numel() and not offset2bag.numel():
        return _bags_of(offsets._np().astype(np.int64), indices.numel(), bags)
    return offset2bag._np().astype(np.int64)


@kernel("_embedding_bag_backward")
def _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
                            num_weights, scale_grad_by_freq, mode, sparse,
                            per_sample_weights=None, padding_idx=-1):
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients (sparse=True) are not "
                                  "supported by glasstorch (no sparse layout)")
    _scalar_types("embedding_bag", "indices", indices, (dt.int64, dt.int32))
    _scalar_types("embedding_bag", "offsets", offsets, (dt.int64, dt.int32))
    if indices.numel() and not offset2bag.numel():
        offset2bag = _from_array(_offset2bag_for(indices, offsets, offset2bag, grad._shape[0]),
                                 offsets.dtype, offsets.device)
    return aten._embedding_bag_dense_backward.default(
        grad, indices, offset2bag, bag_size, maximum_indices, num_weights, scale_grad_by_freq, mode,
        per_sample_weights, padding_idx)


@meta("_embedding_bag_dense_backward")
def _embedding_bag_dense_backward_meta(grad, indices, offset2bag, bag_size, maximum_indices,
                                       num_weights, scale_grad_by_freq, mode,
                                       per_sample_weights=None, padding_idx=-1):
    _scalar_types("embedding_bag", "grad_", grad, (dt.float16, dt.bfloat16, dt.float32,
                                                   dt.float64))
    return TensorMeta((int(num_weights), grad._shape[1]), grad.dtype)


@impl("_embedding_bag_dense_backward")
def _embedding_bag_dense_backward_impl(out, grad, indices, offset2bag, bag_size,
                                       maximum_indices, num_weights, scale_grad_by_freq, mode,
                                       per_sample_weights=None, padding_idx=-1):
    """max: each nonempty bag's gradient goes to its argmax rows, per feature;
    sum/mean: each index's bag gradient (scaled by its sample weight, 1/count of
    the index with scale_grad_by_freq, 1/bag size in mean mode) adds to its row."""
    compute = out.dtype.opmath
    g = _array(grad, compute)
    result = np.zeros(out._shape, dtype=compute)
    if mode == _MAX:
        nonempty = bag_size._np() != 0
        rows = maximum_indices._np().astype(np.int64)[nonempty]
        np.add.at(result, (rows, np.arange(g.shape[1])[None, :]), g[nonempty])
    else:
        idx = indices._np().astype(np.int64).reshape(-1)
        bag_of = offset2bag._np().astype(np.int64)
        scale = np.ones(idx.size, dtype=np.float64)
        if per_sample_weights is not None:
            scale = scale * per_sample_weights._np().astype(np.float64)
        if scale_grad_by_freq:
            # ATen divides the g-th distinct index's gradient by the count of the g-th
            # *sorted* index (``counts[indices_data[i]]`` with i the group number)
            counts = np.bincount(idx, minlength=int(num_weights))
            group = np.searchsorted(np.unique(idx), idx)
            scale = scale / counts[np.sort(idx)[group]]
        if mode == _MEAN:
            sizes = bag_size._np().astype(np.float64)[bag_of]
            scale = np.where(sizes != 0, scale / np.where(sizes != 0, sizes, 1), scale)
        kept = idx != padding_idx
        np.add.at(result, idx[kept], g[bag_of[kept]] * scale[kept].astype(compute)[:, None])
    _write(out, result)


@meta("_embedding_bag_per_sample_weights_backward")
def _embedding_bag_per_sample_weights_backward_meta(grad, weight, indices, offsets, offset2bag,
                                                    mode, padding_idx=-1):
    if mode != _SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for "
                           "mode='sum'")
    return TensorMeta((indices._shape[0],), grad.dtype)


@impl("_embedding_bag_per_sample_weights_backward")
def _embedding_bag_per_sample_weights_backward_impl(out, grad, weight, indices, offsets,
                                                    offset2bag, mode, padding_idx=-1):
    """d out[bag] / d w_i = weight[indices[i]]: each sample's gradient is the dot
    product of its bag's gradient with its embedding row (0 for padding)."""
    compute = out.dtype.opmath
    idx = indices._np().astype(np.int64).reshape(-1)
    bag_of = _offset2bag_for(indices, offsets, offset2bag, grad._shape[0])
    dots = np.einsum("ij,ij->i", _array(grad, compute)[bag_of], _array(weight, compute)[idx])
    _write(out, np.where(idx != padding_idx, dots, 0))
