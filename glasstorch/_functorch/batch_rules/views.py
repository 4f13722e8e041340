"""Views and shape ops (BatchRulesViews.cpp): the batch dim goes first, sizes
get the batch size prepended, dims move up by one; the result is a view of
the physical tensor, so in-place ops through it reach the original.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from ..batched_tensor import adopt_geometry
from . import (RULES, batch_size_of, call, logical_rank, overloads, register, to_front, unwrap, wrap,
               wrap_dim)

aten = ops.aten


def _front(values, level):
    tensor, bdim = unwrap(values[0], level)
    return to_front(tensor, bdim), logical_rank(tensor, bdim)


@register(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.new_zeros.default,
          aten.new_ones.default, aten.new_empty.default, aten.new_full.default)
def _sized(op, level, values):
    """Ops given the example's size (a view's, a new tensor's): the batch
    size goes in front of it (new tensors are batched, as in PyTorch)."""
    tensor, _ = _front(values, level)
    values[0], values[1] = tensor, [tensor.shape[0], *values[1]]
    return wrap(call(op, values), level)


@register(aten._reshape_alias.default)
def _reshape_alias(op, level, values):
    """The strides asked for are the example's; the batch's physical layout
    decides its own, so this is a reshape (as PyTorch's rule)."""
    tensor, _ = _front(values, level)
    return wrap(aten.reshape.default(tensor, [tensor.shape[0], *values[1]]), level)


@register(aten.expand.default)
def _expand(op, level, values):
    tensor, rank = _front(values, level)
    size = list(values[1])
    if len(size) < rank:
        raise RuntimeError(f"expand: the number of sizes provided ({len(size)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({rank})")
    tensor = tensor.reshape(tensor.shape[:1] + (1,) * (len(size) - rank) + tensor.shape[1:])
    values[0], values[1] = tensor, [tensor.shape[0], *size]
    return wrap(call(op, values), level)


@register(aten.permute.default)
def _permute(op, level, values):
    tensor, rank = _front(values, level)
    values[0], values[1] = tensor, [0, *(wrap_dim(d, rank) + 1 for d in values[1])]
    return wrap(call(op, values), level)


@register(aten.t.default)
def _t(op, level, values):
    tensor, rank = _front(values, level)
    return wrap(tensor if rank < 2 else tensor.transpose(1, 2), level)


def _shift(*names):
    """A rule for ops whose ``names`` arguments are logical dims of ``self``."""
    def rule(op, level, values):
        tensor, rank = _front(values, level)
        params = op._schema.arguments
        extra = 1 if op is aten.unsqueeze.default else 0
        for i, a in enumerate(params):
            if a.name in names and values[i] is not None:
                v = values[i]
                values[i] = [wrap_dim(d, rank + extra) + 1 for d in v] \
                    if isinstance(v, (list, tuple)) else wrap_dim(v, rank + extra) + 1
        values[0] = tensor
        return wrap(call(op, values), level)
    return rule


for _names, _dims in (
        (("transpose.int",), ("dim0", "dim1")), (("select.int",), ("dim",)),
        (("slice.Tensor",), ("dim",)), (("narrow",), ("dim",)), (("unsqueeze",), ("dim",)),
        (("squeeze.dim", "squeeze.dims"), ("dim",)),
        (("split.Tensor", "split_with_sizes", "unbind.int", "chunk", "unsafe_split.Tensor",
          "unsafe_chunk"), ("dim",)),
        (("diagonal",), ("dim1", "dim2")), (("movedim.int",), ("source", "destination")),
        (("flip", "rot90"), ("dims",)), (("unflatten.int",), ("dim",)), (("unfold",), ("dimension",))):
    for _o in overloads(*_names):
        RULES[_o] = _shift(*_dims)


@register(*overloads("constant_pad_nd", "tril", "triu", "tril_", "triu_"))
def _trailing(op, level, values):
    """Ops on the trailing dims that take any leading ones (padding, the
    triangles of matrices): the batch goes first, as one more leading dim."""
    self = values[0]
    values[0] = to_front(*unwrap(self, level))
    result = call(op, values)
    return self if op._schema.arguments[0].is_write else wrap(result, level)


@register(*overloads("select_backward", "slice_backward", "diagonal_backward", "unfold_backward",
                     "value_selecting_reduction_backward", "select_scatter", "slice_scatter",
                     "diagonal_scatter"))
def _rebuild(op, level, values):
    """Ops that build a whole tensor around a view-shaped piece: a view's
    backward (given the input's size) and the view scatters.  Every tensor
    goes batch first (an unbatched one expanded), the size gets the batch
    size, dims move up by one."""
    size = batch_size_of(level)
    params = op._schema.arguments
    sizes_at = next((i for i, a in enumerate(params) if a.name in ("input_sizes", "sizes")), None)
    rank = len(values[sizes_at]) if sizes_at is not None else logical_rank(*unwrap(values[0], level))
    for i, (a, v) in enumerate(zip(params, values)):
        if a.type.is_tensor:
            values[i] = to_front(*unwrap(v, level), size)
        elif a.name in ("dim", "dim1", "dim2"):
            values[i] = wrap_dim(v, rank) + 1
    if sizes_at is not None:
        values[sizes_at] = [size, *values[sizes_at]]
    return wrap(call(op, values), level)


@register(aten.squeeze.default)
def _squeeze(op, level, values):
    tensor, rank = _front(values, level)
    dims = [d for d in range(1, rank + 1) if tensor.shape[d] == 1]
    return wrap(aten.squeeze.dims(tensor, dims) if dims else tensor.view(tensor.shape), level)


@register(aten.flatten.using_ints)
def _flatten(op, level, values):
    tensor, rank = _front(values, level)
    if rank == 0:
        return wrap(tensor.unsqueeze(1), level)
    start, end = wrap_dim(values[1], rank) + 1, wrap_dim(values[2], rank) + 1
    return wrap(aten.flatten.using_ints(tensor, start, end), level)


@register(aten.repeat.default)
def _repeat(op, level, values):
    tensor, rank = _front(values, level)
    repeats = list(values[1])
    tensor = tensor.reshape(tensor.shape[:1] + (1,) * (len(repeats) - rank) + tensor.shape[1:])
    return wrap(aten.repeat.default(tensor, [1, *repeats]), level)


@register(aten.roll.default)
def _roll(op, level, values):
    tensor, rank = _front(values, level)
    shifts, dims = values[1], values[2]
    if not dims:                               # over the flattened example
        flat = tensor.reshape(tensor.shape[0], -1)
        return wrap(aten.roll.default(flat, shifts, [1]).reshape(tensor.shape), level)
    return wrap(aten.roll.default(tensor, shifts, [wrap_dim(d, rank) + 1 for d in dims]), level)


@register(aten.cat.default)
def _cat(op, level, values):
    tensors = [unwrap(t, level) for t in values[0]]
    size = next(t.shape[b] for t, b in tensors if b is not None)
    rank = max(logical_rank(t, b) for t, b in tensors if t.dim() - (b is not None) > 0) \
        if any(t.dim() - (b is not None) > 0 for t, b in tensors) else 0
    physical = [to_front(t, b, size) for t, b in tensors if not (t.dim() == 1 and t.shape[0] == 0
                                                                 and b is None)]
    return wrap(aten.cat.default(physical, wrap_dim(values[1], rank) + 1), level)


@register(aten.stack.default)
def _stack(op, level, values):
    tensors = [unwrap(t, level) for t in values[0]]
    size = next(t.shape[b] for t, b in tensors if b is not None)
    rank = logical_rank(*tensors[0])
    return wrap(aten.stack.default([to_front(t, b, size) for t, b in tensors],
                                   wrap_dim(values[1], rank + 1) + 1), level)


def _in_place_view(out_of_place):
    """``squeeze_``, ``t_`` ...: the out-of-place view's batched result becomes
    ``self``'s new physical tensor and geometry."""
    def rule(op, level, values):
        self = values[0]
        return _adopt(self, RULES[out_of_place](out_of_place, level, values))
    return rule


def _adopt(self, view):
    self._value, self._bdim = view._value, view._bdim
    adopt_geometry(self, view)
    return self


for _in_place, _name in (("squeeze_.dim", "squeeze.dim"), ("squeeze_.dims", "squeeze.dims"),
                         ("squeeze_", "squeeze"), ("unsqueeze_", "unsqueeze"),
                         ("transpose_", "transpose.int"), ("t_", "t")):
    for _op, _view in zip(overloads(_in_place), overloads(_name)):
        RULES[_op] = _in_place_view(_view)


@register(aten.as_strided.default)
def _as_strided(op, level, values):
    """Each example's view at its own place: the batch dim keeps its physical
    stride, in front of the sizes and strides asked for (PyTorch's rule, which
    also trusts them to stay inside the example)."""
    tensor, _ = _front(values, level)
    size, stride, offset = values[1], values[2], values[3]
    return wrap(aten.as_strided.default(tensor, [tensor.shape[0], *size],
                                        [tensor.stride(0), *stride], offset), level)
