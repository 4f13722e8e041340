"""Indexing ops (BatchRulesScatterOps.cpp).

Advanced indexing (``index.Tensor``, ``index_put``) gets one more index in
front, ``arange(B)``, so that example ``b`` of the physical ``self`` is read
(or written) only with example ``b`` of the indices:

    x: logical (5, 3)  physical (B, 5, 3);  i: logical (4,)  physical (B, 4)
    x[i]  ->  physical x[arange(B)[:, None], i]  ->  (B, 4, 3)

The ``dim``/``index`` family (gather, scatter) puts every argument's batch
first and moves ``dim`` up by one.  An index of whole slices along ``dim``
(index_select, index_add, index_copy, index_fill) is passed as it is when
unbatched; a batched one becomes the elementwise index of the matching
gather or scatter, since each example selects its own slices.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor
from . import (RULES, batch_size_of, call, inplace_error, logical_rank, overloads, pad_rank, register,
               to_front, unwrap, wrap, wrap_dim)

aten = ops.aten


def _long_indices(indices, level):
    """The indices as (physical, bdim) pairs ((None, None) for a full slice),
    an unbatched boolean mask replaced by the integer indices it selects."""
    out = []
    for index in indices:
        tensor, bdim = unwrap(index, level) if index is not None else (None, None)
        if tensor is not None and tensor.dtype.name in ("bool", "uint8"):
            if bdim is not None:
                raise RuntimeError("vmap: We do not support batching operators that can support "
                                   "dynamic shape. Attempting to batch over indexing with a "
                                   "boolean mask.")
            out.extend((column, None) for column in aten.nonzero.default(tensor).unbind(1))
        else:
            out.append((tensor, bdim))
    return out


class _Advanced:
    """``self`` and its indices made physical, ``arange(B)`` in front.

    When the indices are one adjacent group after ``p`` >= 1 full slices, the
    logical result keeps those ``p`` dims in front of the indexed ones, but the
    physical one (whose ``arange`` index is no longer adjacent to the group)
    puts the indexed dims first; ``to_logical``/``to_physical`` permute
    between the two layouts."""

    def __init__(self, self_, indices, level):
        x, bdim = unwrap(self_, level)
        size = batch_size_of(level)
        pairs = _long_indices(indices, level)
        self.rank = max(logical_rank(t, b) for t, b in pairs if t is not None)
        physical = [None if t is None else pad_rank(to_front(t, b, size), self.rank) for t, b in pairs]
        used = [k for k, t in enumerate(physical) if t is not None]
        self.p = used[0] if used == list(range(used[0], used[-1] + 1)) and used[0] > 0 else 0
        self.result_rank = self.rank + logical_rank(x, bdim) - len(used)
        self.x = to_front(x, bdim, size)
        batch = aten.arange.default(size, device=x.device).reshape((size,) + (1,) * self.rank)
        self.indices = [batch, *physical]

    def _order(self, first, second, ndim):
        return [0, *first, *second, *range(1 + self.rank + self.p, ndim)]

    def to_logical(self, tensor):
        if not self.p:
            return tensor
        r, p = self.rank, self.p
        return tensor.permute(self._order(range(1 + r, 1 + r + p), range(1, 1 + r), tensor.dim()))

    def to_physical(self, tensor):
        if not self.p:
            return tensor
        r, p = self.rank, self.p
        return tensor.permute(self._order(range(1 + p, 1 + p + r), range(1, 1 + p), tensor.dim()))


@register(aten.index.Tensor)
def _index(op, level, values):
    advanced = _Advanced(values[0], values[1], level)
    return wrap(advanced.to_logical(op(advanced.x, advanced.indices)), level)


@register(*overloads("index_put", "index_put_"))
def _index_put(op, level, values):
    """``values`` laid out as the physical ``self[indices]`` is, then one put."""
    self, indices, source, accumulate = values
    inplace = op._schema.arguments[0].is_write
    if inplace and unwrap(self, level)[1] is None:
        raise inplace_error("index_put_")
    advanced = _Advanced(self, indices, level)
    source = pad_rank(to_front(*unwrap(source, level), advanced.x.shape[0]), advanced.result_rank)
    result = op(advanced.x, advanced.indices, advanced.to_physical(source), accumulate)
    return self if inplace else wrap(result, level)


def _prepare(op, level, values):
    """Common to the dim/index rules: the in-place check, and (batch size,
    logical rank of ``self``, ``dim`` moved up by one)."""
    self_bdim = unwrap(values[0], level)[1]
    if op._schema.arguments[0].is_write and self_bdim is None:
        raise inplace_error(op._name.split("::")[-1].split(".")[0])
    rank = logical_rank(*unwrap(values[0], level))
    return batch_size_of(level), rank, wrap_dim(values[1], rank) + 1


def _dim_rule(op, level, values):
    """gather/scatter: ``self``, ``index`` and ``src`` have one rank; each goes
    batch first (an unbatched one expanded) and ``dim`` moves up by one.  A
    logical scalar gets a size-1 dim to index."""
    self = values[0]
    size, rank, values[1] = _prepare(op, level, values)
    for i, (a, v) in enumerate(zip(op._schema.arguments, values)):
        if a.type.is_tensor:
            tensor = to_front(*unwrap(v, level), size)
            values[i] = tensor.unsqueeze(1) if rank == 0 else tensor
    result = call(op, values)
    if op._schema.arguments[0].is_write:
        return self
    return wrap(result.squeeze(1) if rank == 0 else result, level)


for _op in overloads("gather", "scatter.src", "scatter.value", "scatter.reduce", "scatter.value_reduce",
                     "scatter_add", "scatter_reduce.two", "scatter_.src", "scatter_.value",
                     "scatter_.reduce", "scatter_.value_reduce", "scatter_add_", "scatter_reduce_.two"):
    RULES[_op] = _dim_rule


def _elementwise(index, shape, dim):
    """A (B, k) index of whole slices along ``dim`` as the elementwise index,
    of shape ``shape`` with ``k`` at ``dim``, that gather and scatter take."""
    size, k = index.shape
    index = index.reshape((size,) + (1,) * (dim - 1) + (k,) + (1,) * (len(shape) - dim - 1))
    return index.expand(*shape[:dim], k, *shape[dim + 1:])


@register(aten.index_select.default)
def _index_select(op, level, values):
    _, _, dim = _prepare(op, level, values)
    (x, x_bdim), (index, i_bdim) = unwrap(values[0], level), unwrap(values[2], level)
    if i_bdim is None:
        return wrap(op(to_front(x, x_bdim), dim, index), level)
    size = batch_size_of(level)
    x = to_front(x, x_bdim, size)
    index = _elementwise(to_front(index, i_bdim).reshape(size, -1), x.shape, dim)
    return wrap(aten.gather.default(x, dim, index), level)


@register(*overloads("index_add", "index_add_", "index_copy", "index_copy_", "index_fill.int_Tensor",
                     "index_fill.int_Scalar", "index_fill_.int_Tensor", "index_fill_.int_Scalar"))
def _index_slices(op, level, values):
    """index_add/index_copy (index_fill: an index_copy of its value spread over
    the selected slices): the source goes batch first; a batched index makes
    the op a scatter (index_add: a scatter_add of ``alpha * source``)."""
    self = values[0]
    inplace = op._schema.arguments[0].is_write
    size, rank, dim = _prepare(op, level, values)
    x = to_front(*unwrap(self, level), size)
    index, i_bdim = unwrap(values[2], level)
    index = index.reshape(-1) if i_bdim is None else to_front(index, i_bdim).reshape(size, -1)
    kind, source = op._name.split("::")[-1].split(".")[0].rstrip("_"), values[3]
    if kind == "index_fill":
        shape = list(x.shape)
        shape[dim] = index.shape[-1]
        source = pad_rank(to_front(*unwrap(source, level), size), rank).expand(shape) \
            if isinstance(source, Tensor) else aten.full.default(shape, source, dtype=x.dtype,
                                                                 device=x.device)
        kind = "index_copy"
    else:
        source = to_front(*unwrap(source, level), size)
        if kind == "index_add" and values[4] != 1:
            source = source * values[4]
    suffix = "_" if inplace else ""
    if i_bdim is None:
        result = getattr(aten, kind + suffix).default(x, dim, index, source)
    elif kind == "index_add":
        result = getattr(aten, "scatter_add" + suffix).default(
            x, dim, _elementwise(index, source.shape, dim), source)
    else:
        result = getattr(aten, "scatter" + suffix).src(x, dim, _elementwise(index, source.shape, dim),
                                                        source)
    return self if inplace else wrap(result, level)


@register(aten.take.default)
def _take(op, level, values):
    """Each example's elements, flattened, gathered by its (flattened) index."""
    size = batch_size_of(level)
    flat = to_front(*unwrap(values[0], level), size).reshape(size, -1)
    index = to_front(*unwrap(values[1], level), size)
    return wrap(aten.gather.default(flat, 1, index.reshape(size, -1)).reshape(index.shape), level)


@register(aten.masked_select.default)
def _masked_select(op, level, values):
    """A batched ``self`` with an unbatched mask: every example keeps the same
    positions, so the result is (B, number selected)."""
    (x, x_bdim), (mask, m_bdim) = unwrap(values[0], level), unwrap(values[1], level)
    if m_bdim is not None:
        raise RuntimeError("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) "
                           "We cannot support this because for each batch this would return a "
                           "differently shaped Tensor. Please file an issue at "
                           "https://github.com/pytorch/pytorch/issues if you need this feature.")
    from ... import broadcast_shapes
    shape = broadcast_shapes(tuple(x.shape[:x_bdim] + x.shape[x_bdim + 1:]), tuple(mask.shape))
    x = pad_rank(to_front(x, x_bdim), len(shape))
    x = x.expand(x.shape[0], *shape)
    return wrap(aten.index.Tensor(x, [None, mask.expand(shape)]), level)
