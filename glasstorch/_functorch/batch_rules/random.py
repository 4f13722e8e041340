"""Random ops under vmap (BatchRulesRandomness.cpp), at the FuncTorchVmapMode key
(above FuncTorchBatched), by the vmap's ``randomness``:

    "error"      any random op raises
    "same"       one draw, shared by every example (a batched tensor argument
                 is refused: its examples could not share one draw)
    "different"  one draw per example: the op runs on the whole physical
                 batch (factories get the batch size prepended to their size)
"""
from __future__ import annotations

from ..._core.tls import state as _tls
from ..pyfunctorch import BATCHED, VMAP_MODE
from . import batched_again, bind, call, logical_rank, tensor_slots, to_front, unwrap, wrap


def _error() -> RuntimeError:
    return RuntimeError("vmap: called random operation while in randomness error mode. Please "
                        "either use the 'same' or 'different' randomness flags on vmap or perform "
                        "the randomness operation out of vmap")


def vmap_mode_random_kernel(op, keyset, args, kwargs):
    """FuncTorchVmapMode's kernel for every op tagged ``nondeterministic_seeded``;
    one with a decomposition (``dropout``) runs it, as PyTorch registers it there,
    so only the random ops it reaches decide (``dropout(p=0)`` draws nothing)."""
    result = op.decompose(*args, **kwargs)
    if result is not NotImplemented:
        return result
    layer = _tls.functorch_layers[-1]
    randomness, level = layer.randomness(), layer.level()
    if randomness == "error":
        raise _error()
    values = bind(op, args, kwargs)
    params = op._schema.arguments
    slots = tensor_slots(op, values)
    batched = [i for i in slots if unwrap(values[i], level)[1] is not None]
    excluded = _tls.excluded
    _tls.excluded = excluded | BATCHED | VMAP_MODE
    try:
        if params and params[0].is_write and 0 in slots:
            return _in_place(op, values, batched, randomness, level, layer.batch_size())
        if randomness == "same":
            if batched == [0] and op._name.split("::")[-1].split(".")[0].endswith("_like"):
                tensor, bdim = unwrap(values[0], level)   # rand_like(x): one draw of x's shape
                values[0], batched = tensor.select(bdim, 0), []
            if batched:
                raise RuntimeError("Vmap does not currently support same randomness with a "
                                   "batched tensor input. Please file an issue with functorch")
            return call(op, values)
        size = layer.batch_size()
        if not slots:                                     # a factory: size gets the batch
            at = next((i for i, a in enumerate(params) if a.name == "size"), None)
            if at is None:                                # randperm(n): one per example
                from ... import stack
                return wrap(stack([call(op, values) for _ in range(size)]), level)
            values[at] = [size, *values[at]]
            return wrap(call(op, values), level)
        if op._name == "aten::multinomial":                # the examples' rows are more rows
            probs = to_front(*unwrap(values[0], level), size)
            values[0] = probs.reshape(-1, probs.shape[-1])
            return wrap(call(op, values).reshape(*probs.shape[:-1], -1), level)
        rank = max(logical_rank(*unwrap(values[i], level)) for i in slots)
        for i in slots:
            tensor, bdim = unwrap(values[i], level)
            physical = to_front(tensor, bdim, size)
            missing = rank - (physical.dim() - 1)
            values[i] = physical.reshape(physical.shape[:1] + (1,) * missing + physical.shape[1:]) \
                if missing > 0 else physical
        return wrap(call(op, values), level)
    finally:
        _tls.excluded = excluded


def _in_place(op, values, batched, randomness, level, size):
    self = values[0]
    self_bdim = unwrap(self, level)[1]
    if randomness == "different":
        if self_bdim is None:
            raise RuntimeError("vmap: Cannot ask for different inplace randomness on an unbatched "
                               "tensor. This will appear like same randomness. If this is "
                               "necessary for your usage, please file an issue with functorch.")
        values[0] = to_front(*unwrap(self, level))
        for i in batched[1:] if batched and batched[0] == 0 else batched:
            values[i] = to_front(*unwrap(values[i], level))
        call(op, values)
        return self
    if any(i != 0 for i in batched):
        raise RuntimeError("Vmap does not currently support same randomness with a batched "
                           "tensor input. Please file an issue with functorch")
    if self_bdim is None:
        return call(op, values)
    from ... import empty
    draw = empty(self.shape, dtype=self.dtype, device=self.device)
    values[0] = draw
    call(op, values)
    with batched_again():
        self.copy_(draw)                                  # the same draw into every example
    return self
